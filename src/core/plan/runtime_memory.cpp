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
  // In service (traffic-cuda.json, traffic-heldout-cuda.json): on the device cuBLAS comes with
  // the first long prompt (+100 MiB, unless the warm-up loaded it) and the memory pool grows to
  // the temporaries of the largest products, then neither moves: pool +8..+14 MiB for dense
  // models with flash attention, +20..+42 for MoE (the tokens sorted by expert), +62..+76
  // without flash attention (K·Q and the scores·V through cuBLAS), +8..+84 with blocks in host
  // memory (their long products run on the GPU) and +146 for a MoE so at -ub 1024. On the host
  // the heap grows as the driver loads, on first use, each kernel cuBLAS picks for a new product
  // shape, plus cuBLASLt's code: +120..+174 MiB after one prompt per slot, flattening at
  // +183..+269 MiB after 24-40 rounds of mixed prompts on 1 to all slots (dense and MoE,
  // partial offload, warm-up cuBLAS or not).
  const std::uint64_t cublas = shape.warmup_cublas ? 0 : 100 * kMiB;
  const std::uint64_t pool_at_512 = shape.partial_offload    ? 90 * kMiB
                                    : !shape.flash_attention ? 75 * kMiB
                                    : model.is_moe()         ? 45 * kMiB
                                                             : 25 * kMiB;
  const std::uint64_t pool = pool_at_512 * std::max<std::uint32_t>(shape.ubatch, 512) / 512;
  const std::uint64_t host_at_load = (shape.warmup_cublas ? 400 : 310) * kMiB;
  const std::uint64_t device_at_load = (shape.warmup_cublas ? 690 : 590) * kMiB;
  constexpr std::uint64_t kHostGrowth = 280 * kMiB;
  return {host_at_load + kHostGrowth, device_at_load + cublas + pool, host_at_load, device_at_load};
}

}  // namespace gb10tune::plan
