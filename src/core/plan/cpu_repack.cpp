#include "gb10tune/plan/cpu_repack.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>

namespace gb10tune::plan {

using gguf::GgmlType;

namespace {

// One branch of ggml_repack_get_optimal_repack_type (ggml-cpu/repack.cpp, 3f545be): a type,
// the build features it needs (all of them) and the interleave its row count must divide by.
struct RepackRule {
  GgmlType type;
  std::array<std::string_view, 2> needs;
  std::uint32_t rows;
};

constexpr std::array kRepackRules{
    // x86
    RepackRule{GgmlType::q4_0, {"AVX2", ""}, 8},
    RepackRule{GgmlType::q4_k, {"AVX2", ""}, 8},
    RepackRule{GgmlType::q2_k, {"AVX512", ""}, 8},
    RepackRule{GgmlType::iq4_nl, {"AVX2", ""}, 8},
    RepackRule{GgmlType::mxfp4, {"AVX2", ""}, 8},
    // ARM (SVE with a 256-bit vector takes q4_0 at 8 rows; NEON's 4 rows cover it)
    RepackRule{GgmlType::q4_0, {"SVE", "MATMUL_INT8"}, 8},
    RepackRule{GgmlType::q4_0, {"NEON", "MATMUL_INT8"}, 4},
    RepackRule{GgmlType::q4_0, {"NEON", "DOTPROD"}, 4},
    RepackRule{GgmlType::q4_k, {"NEON", "MATMUL_INT8"}, 8},
    RepackRule{GgmlType::q4_k, {"NEON", "DOTPROD"}, 8},
    RepackRule{GgmlType::q5_k, {"NEON", "MATMUL_INT8"}, 8},
    RepackRule{GgmlType::q5_k, {"NEON", "DOTPROD"}, 8},
    RepackRule{GgmlType::q6_k, {"NEON", "MATMUL_INT8"}, 8},
    RepackRule{GgmlType::q6_k, {"NEON", "DOTPROD"}, 8},
    RepackRule{GgmlType::iq4_nl, {"NEON", "DOTPROD"}, 4},
    RepackRule{GgmlType::mxfp4, {"NEON", "DOTPROD"}, 4},
    RepackRule{GgmlType::q8_0, {"NEON", "MATMUL_INT8"}, 4},
    RepackRule{GgmlType::q8_0, {"NEON", "DOTPROD"}, 4},
};

// ggml's TENSOR_ALIGNMENT: the CPU buffer types place each tensor at a multiple of it.
constexpr std::uint64_t kRepackTensorAlignment = 32;

// sys::CpuInfo feature → ggml's system_info name.
struct RepackCpuFeature {
  std::string_view cpu;
  std::string_view ggml;
};
constexpr std::array kRepackCpuFeatures{
    RepackCpuFeature{"avx2", "AVX2"},         RepackCpuFeature{"avx512f", "AVX512"},
    RepackCpuFeature{"amx-int8", "AMX_INT8"}, RepackCpuFeature{"dotprod", "DOTPROD"},
    RepackCpuFeature{"i8mm", "MATMUL_INT8"},  RepackCpuFeature{"sve", "SVE"},
};

bool repack_has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The buffer types tried before CPU_REPACK that the plan does not model.
bool unmodelled_buffer_types(const std::vector<std::string>& names) {
  return repack_has(names, "AMX_INT8") || repack_has(names, "KLEIDIAI") ||
         repack_has(names, "RISCV_V");
}

bool repack_rule_applies(const RepackFeatures& features, const RepackRule& rule) {
  if (features.evidence == RepackEvidence::unknown) {
    return true;
  }
  if (!repack_has(features.names, "REPACK")) {
    return false;
  }
  return std::all_of(rule.needs.begin(), rule.needs.end(), [&](std::string_view need) {
    return need.empty() || repack_has(features.names, need);
  });
}

// "q4_0, q4_K, iq4_nl, mxfp4" for the types `features` repacks; "no type" when none.
std::string repacked_type_names(const RepackFeatures& features) {
  std::vector<std::string_view> names;
  for (const gguf::GgmlTypeInfo& info : gguf::ggml_types()) {
    if (repack_row_multiple(features, info.type) > 0) {
      names.push_back(info.name);
    }
  }
  return names.empty() ? std::string("no type") : fmt::format("{}", fmt::join(names, ", "));
}

std::uint64_t repack_padded(std::uint64_t bytes) {
  return (bytes + kRepackTensorAlignment - 1) / kRepackTensorAlignment * kRepackTensorAlignment;
}

void add_repack_share(RepackPlan& out, GgmlType type, std::uint64_t bytes) {
  auto it = std::find_if(out.types.begin(), out.types.end(),
                         [&](const RepackTypeShare& s) { return s.type == type; });
  if (it == out.types.end()) {
    out.types.push_back({type, 0, 0});
    it = out.types.end() - 1;
  }
  ++it->tensors;
  it->bytes += repack_padded(bytes);
  out.buffer_bytes += repack_padded(bytes);
}

bool repack_takes(const RepackFeatures& features, GgmlType type, std::uint64_t rows,
                  model::ModelFacts::WeightUse use) {
  const std::uint32_t multiple = repack_row_multiple(features, type);
  return use != model::ModelFacts::WeightUse::other && multiple > 0 && rows % multiple == 0;
}

}  // namespace

RepackFeatures repack_features_of_build(std::vector<std::string> names, std::string source) {
  RepackFeatures out;
  out.evidence = RepackEvidence::build;
  out.source = std::move(source);
  if (unmodelled_buffer_types(names)) {
    out.evidence = RepackEvidence::unknown;
    out.source +=
        " lists AMX_INT8, KLEIDIAI or RISCV_V, whose buffer types the plan does not model";
  }
  out.names = std::move(names);
  return out;
}

RepackFeatures repack_features_of_cpu(const sys::CpuInfo& cpu) {
  RepackFeatures out;
  out.source = fmt::format("this CPU's flags ({}; /proc/cpuinfo)", cpu.model);
  if (cpu.family == sys::CpuFamily::other) {
    out.source = fmt::format("the CPU ({}) is neither x86 nor ARM", cpu.model);
    return out;
  }
  out.evidence = RepackEvidence::cpu;
  out.names.emplace_back("REPACK");  // GGML_CPU_REPACK is on by default
  if (cpu.family == sys::CpuFamily::arm) {
    out.names.emplace_back("NEON");  // every AArch64 core
  }
  for (const RepackCpuFeature& feature : kRepackCpuFeatures) {
    if (std::find(cpu.features.begin(), cpu.features.end(), feature.cpu) != cpu.features.end()) {
      out.names.emplace_back(feature.ggml);
    }
  }
  if (unmodelled_buffer_types(out.names)) {
    out.evidence = RepackEvidence::unknown;
    out.source += " lists AMX, whose buffer type the plan does not model";
  }
  return out;
}

RepackOptions parse_repack_options(const std::vector<std::string>& argv) {
  RepackOptions out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "-nr" || arg == "--no-repack") {
      out.enabled = false;
    } else if (arg == "--repack") {
      out.enabled = true;
    } else if (arg == "--no-host") {
      out.no_host = true;
    } else if (arg == "--mmap") {
      out.mmap = true;
    } else if (arg == "--no-mmap" || arg == "--mlock") {
      out.mmap = false;
    } else if ((arg == "-lm" || arg == "--load-mode") && i + 1 < argv.size()) {
      const std::string& mode = argv[++i];
      if (mode == "auto") {
        out.mmap.reset();
      } else if (mode == "mmap" || mode == "mmap+mlock") {
        out.mmap = true;
      } else if (mode == "none" || mode == "mlock" || mode == "dio") {
        out.mmap = false;
      }
    }
  }
  return out;
}

RepackSetting repack_setting(const RepackOptions& options, RepackFeatures features, bool gpu_in_use,
                             bool integrated_gpu) {
  RepackSetting out;
  out.features = std::move(features);
  out.enabled = options.enabled;
  out.gpu_host_buffer_first = gpu_in_use && !options.no_host;
  // --load-mode auto maps the file unless a device in use cannot (an integrated GPU).
  out.mmap = options.mmap.value_or(!(gpu_in_use && integrated_gpu));
  return out;
}

std::uint32_t repack_row_multiple(const RepackFeatures& features, gguf::GgmlType type) {
  std::uint32_t multiple = 0;
  for (const RepackRule& rule : kRepackRules) {
    if (rule.type == type && repack_rule_applies(features, rule)) {
      multiple = multiple == 0 ? rule.rows : std::min(multiple, rule.rows);
    }
  }
  return multiple;
}

RepackPlan plan_cpu_repack(const model::ModelFacts& model, const RepackSetting& setting,
                           const std::function<bool(std::int64_t layer)>& on_cpu) {
  RepackPlan out;
  const auto& spans = model.tensor_spans;
  out.repacked.assign(spans.size(), false);
  if (!setting.enabled) {
    out.basis = "-nr (--no-repack): the CPU backend's extra buffer types are off";
    return out;
  }
  if (setting.gpu_host_buffer_first) {
    out.basis =
        "a CUDA build with a GPU in use: llama.cpp tries the GPU's host buffer before "
        "CPU_REPACK, so the weights left on the CPU are not repacked (--no-host would)";
    return out;
  }
  const RepackFeatures& features = setting.features;
  out.applies = true;
  out.assumed = features.evidence != RepackEvidence::build;
  switch (features.evidence) {
    case RepackEvidence::build:
      out.basis =
          repack_has(features.names, "REPACK")
              ? fmt::format("the build's CPU features ({}) repack {}", features.source,
                            repacked_type_names(features))
              : fmt::format("the build has no CPU_REPACK (no REPACK in {})", features.source);
      break;
    case RepackEvidence::cpu:
      out.basis = fmt::format(
          "unknown whether repacked: the build's features are unknown, counted for {}, the most "
          "a build here can use ({})",
          features.source, repacked_type_names(features));
      break;
    case RepackEvidence::unknown:
      out.basis = fmt::format(
          "unknown whether repacked: {}; counted for every type llama.cpp repacks on some CPU "
          "({})",
          features.source.empty() ? std::string("the build's CPU features are not known")
                                  : features.source,
          repacked_type_names(features));
      break;
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& span = spans[i];
    if (on_cpu(span.layer) && repack_takes(features, span.type, span.rows, span.use)) {
      out.repacked[i] = true;
      add_repack_share(out, span.type, span.bytes);
    }
  }
  // A tied output layer multiplies by a duplicate of token_embd (TENSOR_DUPLICATED), a
  // tensor of its own in the output layer's buffers; the original stays a lookup.
  if (model.tied_output && model.token_embedding_bytes > 0 &&
      on_cpu(model::ModelFacts::kOutputLayer) &&
      repack_takes(features, model.token_embedding_type, model.vocab_size,
                   model::ModelFacts::WeightUse::mul_mat)) {
    add_repack_share(out, model.token_embedding_type, model.token_embedding_bytes);
  }
  // The originals: with mmap, llama.cpp keeps the file range of the tensors in the mapped CPU
  // buffer and unmaps the rest; without mmap none stays.
  std::uint32_t files = 0;
  for (const auto& span : spans) {
    files = std::max(files, span.file + 1);
  }
  for (std::uint32_t file = 0; file < files; ++file) {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (setting.mmap && spans[i].file == file && !out.repacked[i] && on_cpu(spans[i].layer)) {
        first = std::min(first, spans[i].offset);
        last = std::max(last, spans[i].offset + spans[i].bytes);
      }
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].file != file || !out.repacked[i]) {
        continue;
      }
      const std::uint64_t from = std::max(first, spans[i].offset);
      const std::uint64_t to = std::min(last, spans[i].offset + spans[i].bytes);
      out.released_bytes += spans[i].bytes - (to > from ? to - from : 0);
    }
  }
  return out;
}

}  // namespace gb10tune::plan
