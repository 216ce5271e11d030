// What ggml's scheduler copies into the GPU's compute buffer under partial offload (-ngl below
// the layer count on a CUDA build), from llama.cpp 3f545be's sources, confirmed by an allocation
// trace of the CUDA build (docs/memory-plan.md, "Partial offload on CUDA"):
//  - a block left on the CPU keeps its weights (and its KV cache) in host memory, but every op
//    of at least 32 rows that reads such a weight runs on the GPU (ggml-backend.cpp
//    ggml_backend_sched_backend_id_from_cur with op_offload, ggml-cuda.cu
//    ggml_backend_cuda_device_offload_op), and the ops between them follow;
//  - each such weight starts a split of its own (ggml_backend_sched_split_graph: "by starting a
//    new split, the memory of the previously offloaded weights can be reused"), and a split's
//    inputs from another backend are copied into the compute buffer at the split's start
//    (graph_copy: input_cpy nodes before the split's nodes), each copy freed after its last
//    consumer — a weight's after its one op;
//  - the attention of such a block reads its layer's whole K and V cache from host memory:
//    copies of both (cells × streams rows) before the attention op, freed after it;
//  - the graph inputs (positions, masks, cache row indices, output ids) are copied once per
//    backend (tensor_id_copy), at the start of the first split that reads them.
// With every block offloaded there is one split after the token lookup and every input is
// copied at its start, which is what replay_main_graph does then.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/compute_buffers.hpp"
#include "gb10tune/plan/graph_allocator.hpp"

namespace gb10tune::plan {

// ggml-cuda.cu ggml_backend_cuda_device_offload_op: an op whose weight is in host memory runs on
// the GPU when its batch (ne[1]; experts: ne[2]) has at least this many rows (the default of
// GGML_OP_OFFLOAD_MIN_BATCH, which launch never sets).
inline constexpr std::uint64_t kOpOffloadMinRows = 32;

// The block index SplitCopies uses for the output layer (output.weight).
inline constexpr std::uint32_t kOutputBlock = 0xffffffffu;

// The graph inputs a GPU compute buffer holds copies of, in bytes.
struct InputCopies {
  std::uint64_t positions = 0;   // inp_pos, with the Hadamard matrices of a quantized cache
  std::uint64_t masks = 0;       // the KQ masks (f16 with flash attention, f32 without)
  std::uint64_t k_indices = 0;   // the K row indices of the cache writes (set_rows)
  std::uint64_t v_indices = 0;   // V's (one per value when V is stored transposed)
  std::uint64_t output_ids = 0;  // inp_out_ids: the rows the last block keeps
  std::uint64_t total() const { return positions + masks + k_indices + v_indices + output_ids; }
};

// Where in the graph a split first reads an input (the split that copies it).
enum class SplitPoint {
  first_query,       // the first block's RoPE of Q (the split of attn_q, or of attn_q_norm)
  first_attention,   // the first block's attention (the mask)
  last_host_down,    // the last CPU block's down projection, the split that runs on to the end
  last_output_proj,  // the last block's output projection, when that block is a CPU block
};

// The copies of one main graph under partial offload, placed into a replayed GPU buffer.
class SplitCopies {
 public:
  // The blocks in host memory are GraphShape::host_blocks; `tokens` is the reserve's n_tokens,
  // `inputs` what the copied inputs weigh.
  SplitCopies(const model::ModelFacts& model, const GraphShape& shape, std::uint64_t tokens,
              const InputCopies& inputs);

  // True when `block`'s weights are in host memory and its ops of `rows` rows run on the GPU:
  // its weights are copied. `block` kOutputBlock: the output layer.
  bool copies(std::uint32_t block, std::uint64_t rows) const;
  // True when some blocks are in host memory and their big-batch ops run on the GPU.
  bool any() const { return m_host_blocks > 0 && m_tokens >= kOpOffloadMinRows; }
  // True when block `block` (or kOutputBlock) is in host memory, whatever its ops do.
  bool in_host(std::uint32_t block) const {
    return block == kOutputBlock ? m_host_output : block < m_host_blocks;
  }

  // Before an op of `block` reading its tensor `role` ("attn_q", "ffn_down_exps") with `rows`
  // rows: the weight's copy when the block copies (nothing for a tensor the model lacks).
  void before(GraphAllocator& a, std::uint32_t block, std::string_view role, std::uint64_t rows);
  // True when `block` is a CPU block with the tensor `role` ("attn_q_norm").
  bool has(std::uint32_t block, std::string_view role) const;
  // After that op: the weight's copy freed.
  void after(GraphAllocator& a, std::uint32_t block, std::uint64_t rows);
  // The inputs a split first reads at `point` in `block`, each once and only where that point
  // is theirs (the mask at the first block's attention, …); nothing when no block copies.
  void inputs_at(GraphAllocator& a, SplitPoint point, std::uint32_t block);

  // The copy of one layer's K cache (`v` false) or V cache, as the attention reads it: every
  // cell of every stream, in the cache's type.
  std::uint64_t cache_copy_bytes(const model::LayerFacts& layer, bool v) const;

 private:
  // "blk.N.<role>.weight", or "<role>.weight" for the output layer.
  static std::string tensor_name(std::uint32_t block, std::string_view role);

  std::map<std::string, std::uint64_t, std::less<>> m_weights;  // block tensors by name
  GraphShape m_shape;
  InputCopies m_inputs;
  std::uint32_t m_host_blocks = 0;
  bool m_host_output = false;
  std::uint64_t m_v_width_max = 0;  // V's width when stored transposed (flash attention off)
  std::uint32_t m_last_block = 0;
  std::uint64_t m_tokens = 0;
  bool m_placed[5] = {false, false, false, false, false};
};

}  // namespace gb10tune::plan
