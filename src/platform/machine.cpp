#include "gb10tune/platform/machine.hpp"

#include <sys/utsname.h>

namespace gb10tune::platform {

std::string machine_name() {
  utsname names{};
  return ::uname(&names) == 0 ? std::string(names.machine) : std::string();
}

}  // namespace gb10tune::platform
