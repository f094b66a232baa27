#include "tessera/base/error.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace tessera {
namespace {

bool debugging() {
  const char* v = std::getenv("TESSERA_DEBUG");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

std::string without_trailing_newlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string describe(const std::exception& e) {
  if (dynamic_cast<const Error*>(&e) != nullptr) return e.what();  // ours: already what the user should read
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  if (debugging()) return without_trailing_newlines(e.what());
  std::string text = e.what();
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) text = c10->what_without_backtrace();
  // libtorch's message may still carry its source location on later lines
  // ("Exception raised from ..."): keep what it said, on one line.
  const size_t raised = text.find("Exception raised from");
  if (raised != std::string::npos) text.erase(raised);
  text = without_trailing_newlines(text);
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace tessera
