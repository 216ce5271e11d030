#include "gb10tune/util/expected.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune {
namespace {

Expected<int> failing_read(const std::string& message, ExitCode code = ExitCode::failed) {
  return Error{message, code};
}

TEST(Expected, FirstErrorIsEmptyWhenEveryResultHoldsAValue) {
  const Expected<int> number = 3;
  const Expected<std::string> text = std::string("ok");
  const Status done;
  EXPECT_FALSE(first_error(number, text, done));
  EXPECT_FALSE(first_error());
}

TEST(Expected, FirstErrorIsTheEarliestFailureInArgumentOrder) {
  const Expected<int> good = 1;
  const Expected<int> first = failing_read("the first", ExitCode::usage);
  const Expected<int> second = failing_read("the second");
  const auto failed = first_error(good, first, second);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->message, "the first");
  EXPECT_EQ(failed->code, ExitCode::usage);
  EXPECT_EQ(first_error(second, first)->message, "the second");
}

TEST(Expected, FirstErrorTakesAFailedStatusLikeAFailedValue) {
  const Expected<int> good = 1;
  const Status refused = Error{"refused", ExitCode::memory_refused};
  const auto failed = first_error(good, refused);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->message, "refused");
  EXPECT_EQ(failed->code, ExitCode::memory_refused);
}

// The Error is a copy: it outlives results that were temporaries of the call.
TEST(Expected, FirstErrorOfTemporariesOutlivesThem) {
  const auto failed = first_error(Expected<int>(2), failing_read("gone with the temporary"));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->message, "gone with the temporary");
}

}  // namespace
}  // namespace gb10tune
