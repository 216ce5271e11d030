// Size options and settings (--size, --reserve, --overhead, the watch thresholds): text such as
// "12GB" as bytes, or a usage error naming the option.
#pragma once

#include <cstdint>
#include <string>

#include "gb10tune/util/expected.hpp"

namespace gb10tune {

// The bytes of a size option's `value` ("12GB", "8G", "512MiB", "0"); `fallback` when the
// option was not given (empty). A usage Error naming `option` for anything else.
Expected<std::uint64_t> size_option(const std::string& option, const std::string& value,
                                    std::uint64_t fallback);

}  // namespace gb10tune
