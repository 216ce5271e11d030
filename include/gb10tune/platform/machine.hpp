// What this machine calls its hardware architecture.
#pragma once

#include <string>

namespace gb10tune::platform {

// uname(2)'s machine field: "x86_64", "aarch64"; "" when uname fails.
std::string machine_name();

}  // namespace gb10tune::platform
