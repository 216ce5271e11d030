// What a calibration is learned for: the model's architecture, the llama-server build, the
// backend, and the shape of the configuration — every setting that changes what the plan's
// formulas may miss (where the layers sit, the cache types, the graph's batch sizes, the slots
// and their KV layout, the MTP draft context, the projector). A run calibrates only plans of
// the same key; the context size is not part of it (the correction is absolute: what does
// not scale with the context).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::plan {

// The configuration's shape.
struct ConfigShape {
  std::string offload;  // "none" (CPU backend), "full", "partial 20/33"; ", split 3,1"; "rpc …"
  std::string cache_k;  // -ctk: "f16", "q8_0"
  std::string cache_v;  // -ctv
  bool flash_attention = true;
  bool swa_full = false;
  std::uint32_t ubatch = 0;
  std::uint32_t batch = 0;
  std::uint32_t slots = 0;
  bool kv_unified = false;
  std::uint32_t draft_n_max = 0;  // 0: no MTP draft context
  std::string draft_cache;        // "f16/f16" with draft-mtp, else ""
  std::string projector;          // "none", "gpu", "cpu"

  bool operator==(const ConfigShape&) const = default;
};

// The key of a calibration.
struct CalibrationKey {
  std::string architecture;  // general.architecture: "llama", "qwen35"
  std::string build;         // the llama-server build (see launch's build_identity)
  PlanBackend backend = PlanBackend::cpu;
  // nullopt: a run recorded by an older gb10tune, which did not keep the shape: read and kept,
  // never applied.
  std::optional<ConfigShape> shape;

  bool operator==(const CalibrationKey&) const = default;
};

// The key of `config` for `model` started by the build `build`; `rpc_workers` > 0 when the
// model is split over that many RPC workers.
CalibrationKey calibration_key(const model::ModelFacts& model, const std::string& build,
                               const PlanConfig& config, std::size_t rpc_workers = 0);

// "full offload, KV f16/f16, flash attention, ubatch 512, batch 2048, 3 slots (unified KV),
// draft-mtp n-max 4 (draft KV f16/f16), no projector".
std::string describe_shape(const ConfigShape& shape);

// The shape as a JSON object and back; an Error naming what is missing or mistyped.
nlohmann::json shape_to_json(const ConfigShape& shape);
Expected<ConfigShape> shape_from_json(const nlohmann::json& doc);

}  // namespace gb10tune::plan
