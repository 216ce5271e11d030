#include "gb10tune/plan/runtime_memory.hpp"

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
  // In service the process grows as it meets new product shapes (traffic-cuda.json). On the
  // device cuBLAS and the memory pool come with the first long prompt and stay: +108 to +142
  // MiB with every block offloaded, up to +184 MiB with blocks left in host memory (their
  // products run on the GPU for long prompts). On the host the growth is the heap (the kernels
  // the CUDA driver loads lazily as cuBLAS picks them) and cuBLASLt's code: +120..+174 MiB after
  // the first prompt, then more with each new mix of prompt lengths and slots, flattening at
  // +183 to +242 MiB after 24 rounds of 1-3000 token prompts on 1 to all slots (dense and MoE
  // alike, partial offload the same). The plan holds the process in service.
  const std::uint64_t device_growth = (shape.partial_offload ? 190 : 145) * kMiB;
  const std::uint64_t host_growth = 250 * kMiB;
  return {310 * kMiB + host_growth, 590 * kMiB + device_growth,
          (shape.warmup_cublas ? 400 : 310) * kMiB, (shape.warmup_cublas ? 690 : 590) * kMiB};
}

}  // namespace gb10tune::plan
