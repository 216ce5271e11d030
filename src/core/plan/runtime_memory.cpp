#include "gb10tune/plan/runtime_memory.hpp"

#include <algorithm>

namespace gb10tune::plan {

namespace {

// The cache types that ggml's CUDA backend multiplies with mmvf/mmf or cuBLAS (not mmvq).
bool float_cache(gguf::GgmlType type) {
  return type == gguf::GgmlType::f16 || type == gguf::GgmlType::bf16;
}

}  // namespace

bool warmup_loads_cublas(const model::ModelFacts& model, const WarmupAttention& attention) {
  if (attention.flash_attention) {
    return false;
  }
  constexpr std::uint32_t kMmfColumns = 64;  // mmf: src0 ne[0] % (warp size × 4 / type size)
  constexpr std::uint32_t kMmfRows = 32;     // MMF_ROWS_PER_BLOCK: src0 ne[1]
  for (const model::LayerFacts& layer : model.layers) {
    if (layer.index < attention.first_gpu_layer || !layer.main_kv || layer.kv_shared ||
        layer.head_count_kv == 0) {
      continue;
    }
    // K·Q: src0 = K [head_k, n_kv, heads]; the scores·V: src0 = Vᵀ [n_kv, head_v, heads]
    // (n_kv a multiple of 256). MLA keeps no V of its own.
    const std::uint32_t head_k = layer.k_width / layer.head_count_kv;
    const std::uint32_t head_v = layer.v_width / layer.head_count_kv;
    if (float_cache(attention.cache_k) && head_k % kMmfColumns != 0) {
      return true;
    }
    if (!model.mla && float_cache(attention.cache_v) && head_v % kMmfRows != 0) {
      return true;
    }
  }
  return false;
}

std::uint64_t cuda_pool_in_service(const model::ModelFacts& model, const RuntimeShape& shape) {
  constexpr std::uint64_t kMiB = 1ull << 20;
  const std::uint64_t tokens = std::max<std::uint32_t>(shape.ubatch, 512);
  // A dense product through cuBLAS: its input converted to f16 and its f16 result, at most the
  // widest activation on each side (ggml_cuda_op_mul_mat_cublas).
  const std::uint64_t widest =
      std::max({model.ffn_width, model.shared_ffn_width, model.expert_ffn_width,
                std::uint64_t{model.embedding_length}});
  std::uint64_t pool = tokens * widest * 4;
  // Experts (ggml_cuda_mul_mat_id): the tokens copied per used expert, sorted, in and out.
  if (model.is_moe()) {
    pool = std::max(pool, tokens * model.expert_used_count * 4 *
                              (model.embedding_length + model.expert_ffn_width));
  }
  // Without flash attention K·Q and the scores·V run as batched cuBLAS products whose f16
  // scores take n_kv × n_tokens × n_head halves (ggml_cuda_mul_mat_batched_cublas).
  if (!shape.flash_attention) {
    std::uint64_t heads = 0;
    for (const model::LayerFacts& layer : model.layers) {
      heads = std::max<std::uint64_t>(heads, layer.main_kv ? layer.head_count : 0);
    }
    pool = std::max(pool, shape.attention_cells * tokens * heads * 2);
  }
  // Blocks in host memory: their long products run on the GPU too (measured +8..+84 MiB more
  // at 512 tokens, +146 at 1024 with a MoE).
  if (shape.partial_offload) {
    pool += 70 * kMiB * tokens / 512;
  }
  return pool + 8 * kMiB;  // the pool's granularity and the small temporaries beside
}

RuntimeMemory runtime_memory(const model::ModelFacts& model, PlanBackend backend,
                             RuntimeShape shape) {
  constexpr std::uint64_t kMiB = 1ull << 20;
  if (backend == PlanBackend::cpu) {
    // CPU build: RSS minus weights, KV, recurrent state and output buffers after load was
    // 22-24 MiB with a 32000-token vocabulary and 42 MiB with 151936 tokens (the binary's
    // own pages ~12.5 MiB, the heap, the tokenizer's tables ~166 bytes per token).
    const std::uint64_t host = 18 * kMiB + model.vocab_size * 166;
    return {host, 0, host, 0};
  }
  // H200, CUDA 13.0, driver 580. After load, NVML per process minus weights, KV and CUDA0
  // compute was 585-590 MiB for dense and MoE models alike (llama, qwen3moe with 2-8 of 32-128
  // experts, glm4moe, hybrids; heldout-cuda.json, architectures-cuda.json; 522-524 MiB for
  // models a few MiB in size) while cuBLAS was not yet loaded, and 684-691 MiB when the
  // warm-up had loaded it (warmup_loads_cublas; RSS minus the host buffers 273-329 MiB,
  // 365-421 MiB with it).
  //
  // In service (traffic-cuda.json, traffic-heldout-cuda.json, traffic-heldout2-cuda.json): on
  // the device cuBLAS comes with the first long prompt (+100 MiB, unless the warm-up loaded it)
  // and the memory pool grows to the temporaries of the largest product, then neither moves
  // (cuda_pool_in_service). On the host the heap grows as the driver loads, on first use, each
  // kernel cuBLAS picks for a new product shape, plus cuBLASLt's code: +120..+174 MiB after one
  // prompt per slot, flattening at +183..+291 MiB after 24-40 rounds of mixed prompts on 1 to
  // all slots (dense and MoE, partial offload, warm-up cuBLAS or not).
  const std::uint64_t cublas = shape.warmup_cublas ? 0 : 100 * kMiB;
  const std::uint64_t host_at_load = (shape.warmup_cublas ? 400 : 310) * kMiB;
  const std::uint64_t device_at_load = (shape.warmup_cublas ? 690 : 590) * kMiB;
  constexpr std::uint64_t kHostGrowth = 300 * kMiB;
  return {host_at_load + kHostGrowth, device_at_load + cublas + cuda_pool_in_service(model, shape),
          host_at_load, device_at_load};
}

}  // namespace gb10tune::plan
