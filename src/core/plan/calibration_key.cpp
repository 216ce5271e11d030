#include "gb10tune/plan/calibration_key.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/util/json_field.hpp"

namespace gb10tune::plan {

namespace {

std::string type_name(gguf::GgmlType type) {
  return std::string(gguf::ggml_type_info(type).name);
}

// Where the layers sit: none on the CPU backend, all or the first N of M on CUDA (llama.cpp
// offloads the last -ngl of the blocks plus the output layer), the split, the RPC workers.
std::string offload_of(const model::ModelFacts& model, const PlanConfig& config,
                       std::size_t rpc_workers) {
  std::string out;
  if (config.backend == PlanBackend::cpu) {
    out = "none";
  } else {
    const std::uint32_t layers = model.block_count + 1;
    out = !config.gpu_layers || *config.gpu_layers >= layers
              ? std::string("full")
              : fmt::format("partial {}/{}", *config.gpu_layers, layers);
  }
  if (!config.tensor_split.empty()) {
    out += fmt::format(", split {}", fmt::join(config.tensor_split, ","));
  }
  if (rpc_workers > 0) {
    out += fmt::format(", rpc {} worker(s)", rpc_workers);
  }
  return out;
}

}  // namespace

CalibrationKey calibration_key(const model::ModelFacts& model, const std::string& build,
                               const PlanConfig& config, std::size_t rpc_workers) {
  const bool projector_on_gpu = config.projector_offload && config.backend == PlanBackend::cuda;
  return CalibrationKey{model.architecture, build, config.backend,
                        ConfigShape{
                            .offload = offload_of(model, config, rpc_workers),
                            .cache_k = type_name(config.cache_k),
                            .cache_v = type_name(config.cache_v),
                            .flash_attention = config.flash_attention,
                            .swa_full = config.swa_full,
                            .ubatch = config.ubatch,
                            .batch = config.batch,
                            .slots = config.slots,
                            .kv_unified = config.kv_unified,
                            .draft_n_max = config.mtp ? config.draft_n_max : 0,
                            .draft_cache = config.mtp ? type_name(config.draft_cache_k) + "/" +
                                                            type_name(config.draft_cache_v)
                                                      : std::string(),
                            .projector = !config.projector  ? "none"
                                         : projector_on_gpu ? "gpu"
                                                            : "cpu",
                        }};
}

std::string describe_shape(const ConfigShape& s) {
  return fmt::format(
      "{} offload, KV {}/{}, flash attention {}{}, ubatch {}, batch {}, {} slot(s){}, {}, {}",
      s.offload, s.cache_k, s.cache_v, s.flash_attention ? "on" : "off",
      s.swa_full ? ", full SWA cache" : "", s.ubatch, s.batch, s.slots,
      s.kv_unified ? " (unified KV)" : "",
      s.draft_n_max > 0
          ? fmt::format("draft-mtp n-max {} (draft KV {})", s.draft_n_max, s.draft_cache)
          : std::string("no draft"),
      s.projector == "none" ? std::string("no projector") : "projector on " + s.projector);
}

nlohmann::json shape_to_json(const ConfigShape& s) {
  return {{"offload", s.offload},
          {"cache_k", s.cache_k},
          {"cache_v", s.cache_v},
          {"flash_attention", s.flash_attention},
          {"swa_full", s.swa_full},
          {"ubatch", s.ubatch},
          {"batch", s.batch},
          {"slots", s.slots},
          {"kv_unified", s.kv_unified},
          {"draft_n_max", s.draft_n_max},
          {"draft_cache", s.draft_cache},
          {"projector", s.projector}};
}

Expected<ConfigShape> shape_from_json(const nlohmann::json& doc) {
  ConfigShape s;
  std::string error;
  const bool ok =
      get_field(doc, "offload", s.offload, error) && get_field(doc, "cache_k", s.cache_k, error) &&
      get_field(doc, "cache_v", s.cache_v, error) &&
      get_field(doc, "flash_attention", s.flash_attention, error) &&
      get_field(doc, "swa_full", s.swa_full, error) && get_field(doc, "ubatch", s.ubatch, error) &&
      get_field(doc, "batch", s.batch, error) && get_field(doc, "slots", s.slots, error) &&
      get_field(doc, "kv_unified", s.kv_unified, error) &&
      get_field(doc, "draft_n_max", s.draft_n_max, error) &&
      get_field(doc, "draft_cache", s.draft_cache, error) &&
      get_field(doc, "projector", s.projector, error);
  if (!ok) {
    return Error{"the configuration's shape: " + error};
  }
  return s;
}

}  // namespace gb10tune::plan
