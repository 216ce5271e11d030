// CPU repacking of quantized weights. ggml's CPU backend, built with GGML_CPU_REPACK (the
// default), offers an extra buffer type, CPU_REPACK, that holds weights re-laid out in rows
// interleaved for its SIMD kernels. The rules follow llama.cpp (2026-08, commit 3f545be):
//  - llama-model.cpp make_cpu_buft_list: the CPU's buffer types are tried in the order
//    accelerators, the first GPU's host buffer (CUDA_Host), the CPU's extra types (unless
//    -nr/--no-repack), the plain CPU buffer; llama-model-loader.cpp select_weight_buft takes
//    the first that supports the tensor's op. A GPU's host buffer supports every product, so a
//    CUDA build with a GPU in use repacks nothing unless --no-host (with mmap the host buffer
//    then becomes the plain CPU buffer);
//  - ggml-cpu/repack.cpp extra_buffer_type::supports_op: a 2-D weight of mul_mat or a 3-D expert
//    stack of mul_mat_id (never the token embedding, a row lookup), whose type has an
//    interleaved kernel for the build's features and whose row count ne[1] divides by the
//    interleave (ggml_repack_get_optimal_repack_type):
//      x86 AVX2: q4_0, q4_K, iq4_nl, mxfp4 (8 rows); AVX-512F also q2_K (8 rows);
//      ARM NEON with i8mm or dotprod: q4_0 (4), q4_K, q5_K, q6_K (8), q8_0 (4); with dotprod
//      iq4_nl and mxfp4 (4);
//    the features are compile-time (ggml_cpu_has_avx2 & co.): what the build's system_info
//    line lists, not what the CPU could do;
//  - the repacked copy has the original's size (no get_alloc_size: ggml_nbytes), each tensor
//    padded to 32 bytes (TENSOR_ALIGNMENT), in one anonymous buffer ("CPU_REPACK model buffer
//    size"). The original is read to repack it: with mmap its pages stay mapped (and resident)
//    when they lie inside the file range of the tensors left in the mapped CPU buffer
//    (CPU_Mapped) and are unmapped outside it (llama_model_loader::load_all_data); without
//    mmap they go through a temporary read buffer.
// The AMX (x86 AMX_INT8 builds) and KleidiAI (GGML_CPU_KLEIDIAI) buffer types, tried before
// CPU_REPACK, and RISC-V's repacking are not modelled: such a build counts as unknown.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/sys/cpuinfo.hpp"

namespace gb10tune::plan {

// Where the CPU features a plan repacks with come from.
enum class RepackEvidence {
  build,    // the build's own system_info line: exact
  cpu,      // the build's are unknown: this CPU's, the most a build running here can use
  unknown,  // nothing known: every type any CPU repacks
};

// The CPU features of a llama-server build that decide what its CPU backend repacks, by
// ggml's system_info names ("AVX2", "AVX512", "NEON", "DOTPROD", "MATMUL_INT8", "REPACK").
struct RepackFeatures {
  RepackEvidence evidence = RepackEvidence::unknown;
  std::vector<std::string> names;
  std::string source;  // where they were read, for the report
};

// The features of a build from its system_info line's features (those "= 1", as
// verify::parse_system_info_features lists them). A build whose AMX or KleidiAI buffer types
// would come first counts as unknown (`names` kept, evidence unknown). Never fails.
RepackFeatures repack_features_of_build(std::vector<std::string> names, std::string source);

// The most a build running on `cpu` can use (ggml's names of its flags, REPACK assumed on):
// evidence cpu; evidence unknown for a CPU that is neither x86 nor ARM. Never fails.
RepackFeatures repack_features_of_cpu(const sys::CpuInfo& cpu);

// How the server will load its weights, as far as repacking is concerned.
struct RepackSetting {
  RepackFeatures features;
  bool enabled = true;                 // false: -nr / --no-repack
  bool gpu_host_buffer_first = false;  // a CUDA build with a GPU in use, without --no-host
  bool mmap = true;                    // the weights are memory-mapped (not --no-mmap)
};

// What a llama-server command line says about repacking and loading, the last spelling of
// each option winning as in llama.cpp's parser: -nr/--no-repack/--repack; --no-host; --mmap,
// --no-mmap, --mlock and -lm/--load-mode MODE (none, mlock and dio read the file; mmap,
// mmap+mlock and auto map it). Unknown spellings are left alone. Never fails.
struct RepackOptions {
  bool enabled = true;       // --repack (default) or -nr/--no-repack
  bool no_host = false;      // --no-host: the extra buffer types before a GPU's host buffer
  std::optional<bool> mmap;  // nullopt: --load-mode auto (llama.cpp's default)
};
RepackOptions parse_repack_options(const std::vector<std::string>& argv);

// What decides a server's repacking besides the features: the options of its command line,
// whether its CUDA backend has a GPU in use (a CUDA build on a machine with an NVIDIA GPU, not
// --device none) and whether that GPU is integrated (GB10: --load-mode auto then reads the
// file instead of mapping it). Never fails.
RepackSetting repack_setting(const RepackOptions& options, RepackFeatures features, bool gpu_in_use,
                             bool integrated_gpu);

// The row multiple a weight of `type` needs to be repacked with `features` (the smallest
// interleave of the kernels that take it), or 0 when that type is not repacked. With evidence
// cpu or unknown the answer is the largest set the rules allow (the plan's safe side).
std::uint32_t repack_row_multiple(const RepackFeatures& features, gguf::GgmlType type);

// One weight type's share of the repack buffer.
struct RepackTypeShare {
  gguf::GgmlType type = gguf::GgmlType::f32;
  std::uint32_t tensors = 0;
  std::uint64_t bytes = 0;  // padded as in the buffer
};

// The CPU_REPACK buffer of a plan.
struct RepackPlan {
  bool applies = false;  // the CPU backend's repack buffer type is tried for the CPU's weights
  bool assumed = false;  // the build's features are unknown: counted on the safe side
  std::uint64_t buffer_bytes = 0;  // the CPU_REPACK model buffer
  // Originals of repacked tensors that do not stay resident: outside the mapped range (mmap),
  // or all of them (no mmap). The plan's weights leave them out.
  std::uint64_t released_bytes = 0;
  std::vector<RepackTypeShare> types;  // by type, in the order first met
  std::vector<bool> repacked;          // per model.tensor_spans entry
  std::string basis;                   // one line: what decided it
};

// The repack of the tensors the CPU computes with: `on_cpu(layer)` says whether a layer
// (a block index, ModelFacts::kInputLayer or kOutputLayer) is loaded and on the CPU. A tied
// output layer on the CPU repacks its copy of token_embd. Never fails.
RepackPlan plan_cpu_repack(const model::ModelFacts& model, const RepackSetting& setting,
                           const std::function<bool(std::int64_t layer)>& on_cpu);

}  // namespace gb10tune::plan
