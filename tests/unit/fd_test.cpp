#include "gb10tune/platform/fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <utility>

#include "support/test_context.hpp"

namespace gb10tune::platform {
namespace {

using testing::contains;
using testing::TempDir;

// Whether `fd` is an open descriptor of this process.
bool descriptor_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

TEST(Fd, ClosesItsDescriptorOnceWhenDestroyedOrMovedFrom) {
  const TempDir dir;
  const auto path = dir.write("data", "0123456789");
  int number = -1;
  {
    auto opened = open_read_only(path);
    ASSERT_TRUE(opened) << opened.error().message;
    number = opened->get();
    EXPECT_TRUE(descriptor_open(number));
    Fd moved(std::move(*opened));
    EXPECT_FALSE(opened->valid());  // the moved-from Fd owns nothing and closes nothing
    EXPECT_EQ(moved.get(), number);
    EXPECT_TRUE(descriptor_open(number));
  }
  EXPECT_FALSE(descriptor_open(number));
}

TEST(Fd, AssigningClosesTheDescriptorHeldBefore) {
  const TempDir dir;
  auto first = open_read_only(dir.write("a", "a"));
  auto second = open_read_only(dir.write("b", "b"));
  ASSERT_TRUE(first && second);
  const int held = first->get();
  *first = std::move(*second);
  EXPECT_FALSE(descriptor_open(held));
  EXPECT_TRUE(first->close());
  EXPECT_FALSE(first->valid());
  EXPECT_TRUE(first->close());  // closing nothing is no error
}

TEST(Fd, OpenReadOnlyGivesTheSystemsReason) {
  const TempDir dir;
  const auto missing = open_read_only(dir.path() / "missing.gguf");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "No such file or directory");
}

TEST(Fd, ReadsAtAnOffsetAndTellsWhatTheFileIs) {
  const TempDir dir;
  auto fd = open_read_only(dir.write("data", "0123456789"));
  ASSERT_TRUE(fd);
  const auto facts = open_file_facts(*fd);
  ASSERT_TRUE(facts) << facts.error().message;
  EXPECT_TRUE(facts->regular);
  EXPECT_EQ(facts->size, 10u);
  char buffer[8] = {};
  const auto got = read_at(*fd, 6, buffer, sizeof buffer);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(std::string(buffer, *got), "6789");
  const auto at_end = read_at(*fd, 10, buffer, sizeof buffer);
  ASSERT_TRUE(at_end);
  EXPECT_EQ(*at_end, 0u);

  auto directory = open_read_only(dir.path());
  ASSERT_TRUE(directory);
  const auto directory_facts = open_file_facts(*directory);
  ASSERT_TRUE(directory_facts);
  EXPECT_FALSE(directory_facts->regular);
  const auto unreadable = read_at(*directory, 0, buffer, sizeof buffer);
  ASSERT_FALSE(unreadable);
  EXPECT_TRUE(contains(unreadable.error().message, "directory")) << unreadable.error().message;
}

}  // namespace
}  // namespace gb10tune::platform
