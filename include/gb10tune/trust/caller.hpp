// Who gb10tune runs as, in the terms the trust rules (trust/path_rules.hpp) use.
#pragma once

#include <string>
#include <string_view>

namespace gb10tune::trust {

// The user gb10tune runs as (its effective uid) and that user's name ("" when unknown).
struct Caller {
  unsigned uid = 0;
  std::string name;
};

// This process's effective user and its name from the user database. Never fails.
Caller current_caller();

// "alice (uid 1000)", "root", or "uid 4242" when the user database has no name for it.
std::string describe_user(unsigned uid, std::string_view name);

}  // namespace gb10tune::trust
