// The replay of ggml's dynamic allocator: placements as ggml_dyn_tallocr makes them.
#include "gb10tune/plan/graph_allocator.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gb10tune::plan {
namespace {

TEST(GraphAllocator, SizesArePaddedToTheAlignmentAndTheEndGrows) {
  GraphAllocator a(128);
  a.place("x", 1);
  a.place("y", 129);
  EXPECT_EQ(a.high_water(), 128u + 256u);
  EXPECT_EQ(a.high_water_tensor(), "y");
}

TEST(GraphAllocator, AFreedBlockIsReusedByTheBestFitNotTheFirst) {
  GraphAllocator a(1);
  a.place("big", 100);
  a.place("sep1", 1);
  a.place("small", 40);
  a.place("sep2", 1);
  a.free("big");
  a.free("small");
  // 30 bytes fit both holes: the smaller (40 at offset 101) wins, nothing grows.
  a.place("t", 30);
  EXPECT_EQ(a.high_water(), 142u);
  // 90 fits only the first hole.
  a.place("u", 90);
  EXPECT_EQ(a.high_water(), 142u);
  // 20 fits no hole left (10 and 10): it goes to the end.
  a.place("v", 20);
  EXPECT_EQ(a.high_water(), 162u);
  EXPECT_EQ(a.high_water_tensor(), "v");
}

TEST(GraphAllocator, NeighboursMergeSoALargerTensorFitsBelowTheEnd) {
  GraphAllocator a(1);
  a.place("a", 10);
  a.place("b", 10);
  a.place("c", 10);
  a.place("top", 10);
  a.free("a");
  a.free("c");
  a.free("b");  // merges a, b and c into one hole of 30
  a.place("d", 30);
  EXPECT_EQ(a.high_water(), 40u);
}

// The MoE case the phase sums missed: the down projection does not fit the hole its gate and up
// leave below the GLU, so it lands above the GLU.
TEST(GraphAllocator, ATensorLargerThanEveryHoleLandsAtTheEnd) {
  GraphAllocator a(1);
  a.place("gate", 12);
  a.place("up", 12);
  a.place("glu", 12);
  a.free("gate");
  a.free("up");
  a.place("down", 32);
  EXPECT_EQ(a.high_water(), 68u);
  GraphAllocator b(1);
  b.place("gate", 12);
  b.place("up", 12);
  b.place("glu", 12);
  b.free("gate");
  b.free("up");
  b.place("down", 16);  // fits the hole of 24
  EXPECT_EQ(b.high_water(), 36u);
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
