#include "gb10tune/util/size_option.hpp"

#include <fmt/format.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune {

Expected<std::uint64_t> size_option(const std::string& option, const std::string& value,
                                    std::uint64_t fallback) {
  if (value.empty()) {
    return fallback;
  }
  if (value == "0") {
    return std::uint64_t{0};
  }
  if (const auto bytes = parse_size(value)) {
    return *bytes;
  }
  return Error{fmt::format("{} '{}' is not a size; write e.g. 12GB, 8G or 512MiB", option, value),
               ExitCode::usage};
}

}  // namespace gb10tune
