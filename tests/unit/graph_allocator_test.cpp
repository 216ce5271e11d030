// The replay of ggml's dynamic allocator: placements as ggml_dyn_tallocr makes them.
#include "gb10tune/plan/graph_allocator.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string_view>

namespace gb10tune::plan {
namespace {

// One step of a walk over a graph: place `bytes` for `name`, or free it (kFree).
struct Step {
  std::string_view name;
  std::int64_t bytes;
};
constexpr std::int64_t kFree = -1;

// The allocator after `steps`, at `alignment`.
GraphAllocator walk(std::uint64_t alignment, std::initializer_list<Step> steps) {
  GraphAllocator a(alignment);
  for (const Step& step : steps) {
    if (step.bytes == kFree) {
      a.free(step.name);
    } else {
      a.place(step.name, static_cast<std::uint64_t>(step.bytes));
    }
  }
  return a;
}

TEST(GraphAllocator, SizesArePaddedToTheAlignmentAndTheEndGrows) {
  const GraphAllocator a = walk(128, {{"x", 1}, {"y", 129}});
  EXPECT_EQ(a.high_water(), 128u + 256u);
  EXPECT_EQ(a.high_water_tensor(), "y");
}

// Holes of 100 (offset 0) and 40 (offset 101) below the end at 142.
TEST(GraphAllocator, AFreedBlockIsReusedByTheBestFitNotTheFirst) {
  const std::initializer_list<Step> holes = {{"big", 100}, {"sep1", 1},    {"small", 40},
                                             {"sep2", 1},  {"big", kFree}, {"small", kFree}};
  GraphAllocator a = walk(1, holes);
  a.place("t", 30);  // fits both holes: the smaller wins, nothing grows
  EXPECT_EQ(a.high_water(), 142u);
  a.place("u", 90);  // fits only the first
  EXPECT_EQ(a.high_water(), 142u);
  a.place("v", 20);  // the holes left (10 and 10) are too small: the end grows
  EXPECT_EQ(a.high_water(), 162u);
  EXPECT_EQ(a.high_water_tensor(), "v");
}

TEST(GraphAllocator, NeighboursMergeSoALargerTensorFitsBelowTheEnd) {
  // a, c, then b freed: one hole of 30.
  const GraphAllocator a = walk(1, {{"a", 10},
                                    {"b", 10},
                                    {"c", 10},
                                    {"top", 10},
                                    {"a", kFree},
                                    {"c", kFree},
                                    {"b", kFree},
                                    {"d", 30}});
  EXPECT_EQ(a.high_water(), 40u);
}

// The MoE case the phase sums missed: a down projection that does not fit the hole its gate and
// up leave below the GLU lands above the GLU; one that fits goes into the hole.
TEST(GraphAllocator, ATensorLargerThanEveryHoleLandsAtTheEnd) {
  for (const auto& [down, end] : {std::pair{32, 68u}, std::pair{16, 36u}}) {
    const GraphAllocator a = walk(
        1, {{"gate", 12}, {"up", 12}, {"glu", 12}, {"gate", kFree}, {"up", kFree}, {"down", down}});
    EXPECT_EQ(a.high_water(), end) << "down " << down;
  }
}

TEST(GraphAllocator, InPlaceRenamingKeepsTheBlock) {
  GraphAllocator a(1);
  a.place("x", 10);
  a.rename("y", "x");
  a.place("z", 5);
  a.free("y");
  a.place("w", 10);  // into y's freed block
  EXPECT_EQ(a.high_water(), 15u);
}

TEST(GraphAllocator, MisuseIsABug) {
  GraphAllocator a(1);
  a.place("x", 1);
  EXPECT_THROW(a.place("x", 1), std::logic_error);
  EXPECT_THROW(a.free("nope"), std::logic_error);
  EXPECT_THROW(a.rename("x", "nope"), std::logic_error);
}

}  // namespace
}  // namespace gb10tune::plan
