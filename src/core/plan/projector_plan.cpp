#include "gb10tune/plan/projector_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace gb10tune::plan {

namespace {

// Projector types whose compute rule was checked against a real llama-server.
constexpr std::array<std::string_view, 1> kCheckedTypes{"gemma3"};

// The side of the warm-up image (clip.cpp get_dummy_batch uses hparams.warmup_image_size):
// image_size, or sqrt(image_max_pixels) for the projectors that set a pixel budget.
std::uint32_t warmup_side(const model::ProjectorFacts& p) {
  if (p.image_max_pixels > 0) {
    return static_cast<std::uint32_t>(std::sqrt(static_cast<double>(p.image_max_pixels)));
  }
  return p.image_size;
}

}  // namespace

ProjectorPlan plan_projector(const model::ProjectorFacts& projector, bool flash_attention,
                             bool on_device, const std::string& device) {
  ProjectorPlan plan;
  plan.weights_bytes = projector.weight_bytes;
  plan.on_device = on_device;
  plan.device = on_device ? (device.empty() ? std::string("CUDA0") : device) : std::string("CPU");
  const std::uint32_t side = warmup_side(projector);
  if (side == 0 || projector.patch_size == 0 || projector.embedding_length == 0) {
    plan.basis = projector.has_audio && !projector.has_vision
                     ? "not modelled: an audio encoder (no vision tower in the file)"
                     : "not modelled: the file has no clip.vision image_size, patch_size or "
                       "embedding_length";
    return plan;
  }
  const std::uint64_t per_side = side / projector.patch_size;
  const std::uint64_t n = per_side * per_side;
  const std::uint64_t e = projector.embedding_length;
  const std::uint64_t f = projector.feed_forward_length;
  const std::uint64_t h = projector.head_count;
  const std::uint64_t patch = projector.patch_size;
  plan.warmup_side = side;
  plan.patches = n;

  // ggml_conv_2d: im2col in f16 unless the kernel is bf16 (then f32).
  const std::uint64_t im2col_size = projector.patch_embd_type == gguf::GgmlType::bf16 ? 4 : 2;
  const std::uint64_t image = 3ull * side * side * 4;
  const std::uint64_t embedding = image + 3 * patch * patch * n * im2col_size;
  const std::uint64_t unit = e * n * 4;  // one f32 activation of the tower
  const std::uint64_t attention = flash_attention ? 5 * unit : n * n * h * 4 + 6 * unit;
  const std::uint64_t mlp = (3 * e + f) * n * 4;

  plan.compute_bytes = std::max({embedding, attention, mlp});
  // On a GPU backend the input image is set on the host: clip keeps it in a CPU buffer of its
  // own (on the CPU backend it is part of the one buffer above).
  plan.host_compute_bytes = on_device ? image : 0;
  if (plan.compute_bytes == embedding) {
    plan.peak_phase = "patch embedding (image + im2col)";
  } else if (plan.compute_bytes == attention) {
    plan.peak_phase = flash_attention ? "attention (flash)" : "attention scores (KQ)";
  } else {
    plan.peak_phase = "MLP";
  }
  const std::string_view type = projector.projector_type;
  plan.checked = std::find(kCheckedTypes.begin(), kCheckedTypes.end(), type) != kCheckedTypes.end();
  plan.basis =
      plan.checked
          ? fmt::format("the vision tower's rule, checked against llama-server for {}", type)
          : fmt::format(
                "estimated: the vision tower's rule, not checked for projector type "
                "'{}' (its graph may add merges or windows)",
                type.empty() ? "(none)" : type);
  return plan;
}

}  // namespace gb10tune::plan
