// The real ServerControl's note in a server's log (the supervisor's tests use a fake one): what
// it writes to a file, through platform's log appending.
#include "gb10tune/watch/server_control.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::watch {
namespace {

using testing::read_text;
using testing::TempDir;

TEST(SystemServerControl, TheNoteIsALineOfItsOwnAtTheEndOfTheLog) {
  const TempDir state;
  const auto log = state.write("server.log", "srv  load_model: loaded\n");
  SystemServerControl control(platform::Sysroot(), launch::StatePaths::under(state.path()));
  control.note_in_log(log, "==== gb10tune watch: stopping pid 42");
  control.note_in_log(log, "second");
  EXPECT_EQ(read_text(log),
            "srv  load_model: loaded\n==== gb10tune watch: stopping pid 42\nsecond\n");
}

TEST(SystemServerControl, ALogThatCannotBeOpenedGetsNoNoteAndNoError) {
  const TempDir state;
  SystemServerControl control(platform::Sysroot(), launch::StatePaths::under(state.path()));
  const auto missing = state.path() / "no such folder" / "server.log";
  control.note_in_log(missing, "note");
  EXPECT_FALSE(std::filesystem::exists(missing.parent_path()));
}

}  // namespace
}  // namespace gb10tune::watch
