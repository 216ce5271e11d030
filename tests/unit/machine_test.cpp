#include "gb10tune/platform/machine.hpp"

#include <gtest/gtest.h>
#include <sys/utsname.h>

namespace gb10tune::platform {
namespace {

TEST(Machine, NameIsUnamesMachine) {
  utsname names{};
  ASSERT_EQ(::uname(&names), 0);
  EXPECT_FALSE(machine_name().empty());
  EXPECT_EQ(machine_name(), names.machine);
}

}  // namespace
}  // namespace gb10tune::platform
