#include "gb10tune/trust/caller.hpp"

#include <fmt/format.h>

#include "gb10tune/platform/file_facts.hpp"

namespace gb10tune::trust {

Caller current_caller() {
  const unsigned uid = platform::effective_uid();
  return Caller{uid, platform::user_name(uid)};
}

std::string describe_user(unsigned uid, std::string_view name) {
  if (uid == 0 && (name.empty() || name == "root")) {
    return "root";
  }
  return name.empty() ? fmt::format("uid {}", uid) : fmt::format("{} (uid {})", name, uid);
}

}  // namespace gb10tune::trust
