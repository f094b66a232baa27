#include "tools/flag_types.h"

#include <cstdlib>

#include "tessera/base/error.h"

namespace tessera::tools {

sampling::Fanouts parse_fanouts(const std::string& text, const std::string& flag) {
  std::vector<int64_t> fanouts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    char* stop = nullptr;
    const long long value = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || value < -1)
      fail("{} '{}': entry '{}' is not a fanout (a count >= 0, or -1 for all neighbours)", flag, text, item);
    fanouts.push_back(value);
    begin = end + 1;
  }
  return sampling::Fanouts(std::move(fanouts));
}

CLI::Option* add_fanouts_option(CLI::App* cmd, const std::string& names, sampling::Fanouts* out,
                                const std::string& help) {
  const std::string flag = names.substr(0, names.find(','));
  return cmd->add_option_function<std::string>(
      names,
      [out, flag](const std::string& text) { *out = parse_fanouts(text, flag); },
      help);
}

}  // namespace tessera::tools
