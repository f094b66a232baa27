// Errors that reach the user. Tessera reports every failure by throwing tessera::Error (a std::runtime_error)
// whose message names the file (and line or field), flag, variable or peer involved and what was expected;
// nothing returns error codes. fail() formats such a message with fmt and throws it; it never returns.
// The CLI prints the message and exits non-zero. Both are header-only, hold no state and may be used from any
// thread; an Error is an ordinary value that owns a copy of its message.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tessera {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A peer that died, cannot be reached or did not answer in time: the job is
// broken, not the request. (Python raises it as ConnectionError.)
class PeerError : public Error {
 public:
  explicit PeerError(const std::string& message) : Error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_peer(fmt::format_string<Args...> format, Args&&... args) {
  throw PeerError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tessera
