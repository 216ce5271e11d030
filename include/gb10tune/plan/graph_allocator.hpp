// A replay of ggml's graph allocator for one compute buffer (ggml/src/ggml-alloc.c, the dynamic
// allocator `ggml_dyn_tallocr` of llama.cpp 3f545be): a tensor goes into the best-fitting free
// block below the end of the buffer (the smallest that holds it, the later of equals), else at
// the end; a freed tensor's block merges with its free neighbours. The buffer llama.cpp reserves
// is the high-water mark of that walk over the graph, so replaying the same sequence of
// allocations and frees gives the same size, fragmentation included.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::plan {

// Places and frees named tensors the way ggml_dyn_tallocr does; tracks the high-water mark.
class GraphAllocator {
 public:
  // `alignment`: the buffer type's (128 bytes on CUDA, 32 on the CPU); sizes are padded to it.
  explicit GraphAllocator(std::uint64_t alignment);

  // Allocates `bytes` for `name` (a name already placed is a bug: it throws std::logic_error).
  // Zero bytes place nothing but make `name` known, so that freeing it later is valid.
  void place(std::string_view name, std::uint64_t bytes);
  // Frees `name`'s block (an unknown name is a bug: std::logic_error).
  void free(std::string_view name);
  // An operation that ran in place: `to` takes over `from`'s block.
  void rename(std::string_view to, std::string_view from);

  // The end of the highest block ever placed: the buffer size.
  std::uint64_t high_water() const { return m_high_water; }
  // The tensor whose placement last raised the high-water mark ("" before any).
  const std::string& high_water_tensor() const { return m_high_water_tensor; }

 private:
  struct Block {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
  };
  std::uint64_t m_alignment;
  std::vector<Block> m_free;  // sorted by offset; the last one is the open end
  std::map<std::string, Block, std::less<>> m_placed;
  std::uint64_t m_high_water = 0;
  std::string m_high_water_tensor;
};

}  // namespace gb10tune::plan
