// The memory of a multimodal projector (mmproj) in llama-server: its weights and the compute
// buffer its clip graph reserves, as llama.cpp's tools/mtmd/clip.cpp (2026-08, commit 3f545be)
// does it:
//  - weights: every tensor of the file, loaded into a buffer of the projector's backend (the
//    GPU unless --no-mmproj-offload, clip_ctx: "CLIP using … backend"); the log's
//    "load_hparams: model size" is their sum;
//  - compute: warmup() builds the graph for one warm-up image (get_dummy_batch: a square of
//    clip.vision.image_size, or sqrt(image_max_pixels) where the file sets it) and
//    reserve_compute_meta() reserves ggml's allocator for it ("reserve_compute_meta: … compute
//    buffer size"). Flash attention follows llama-server's -fa (auto: on where the backend
//    supports it, as the CPU and CUDA backends do).
// The compute buffer is the largest of three phases of the vision tower (n patches of width E,
// feed-forward width F, H heads):
//  - the patch embedding: the image (3 × side² f32) and its im2col (3 × patch² × n, f16; f32
//    for a bf16 patch embedding), alive together;
//  - attention: with flash attention 5 × E × n f32 (residual, normed input, Q, K, V); without,
//    the scores n × n × H f32 plus 6 × E × n f32;
//  - the MLP: (3 × E + F) × n f32.
// Checked against llama-server for projector type gemma3 (tests/fixtures/llama-server/mmproj):
// exact to the logged 0.01 MiB in every run. Other types run other graphs (merges, windows,
// deep stacks, audio encoders): the same rule is then an estimate, and said so.
#pragma once

#include <cstdint>
#include <string>

#include "gb10tune/model/model_facts.hpp"

namespace gb10tune::plan {

// The projector's part of the plan.
struct ProjectorPlan {
  std::uint64_t weights_bytes = 0;  // every tensor of the mmproj file
  std::uint64_t compute_bytes = 0;  // the clip graph's compute buffer, on clip's backend
  // With the tower on a GPU: clip's CPU buffer beside it, the f32 input image (3 × side² × 4).
  std::uint64_t host_compute_bytes = 0;
  bool on_device = false;         // on the GPU backend; false: host memory (CPU)
  std::string device = "CPU";     // "CUDA0" (or -mmdev's device) when on_device
  std::uint32_t warmup_side = 0;  // the warm-up image's side in pixels
  std::uint64_t patches = 0;      // patches of the warm-up image
  std::string peak_phase;         // which phase sets the compute buffer
  bool checked = false;           // the rule was checked against llama-server for this type
  std::string basis;              // how the compute figure was obtained, in words
  std::uint64_t bytes() const { return weights_bytes + compute_bytes + host_compute_bytes; }
  std::uint64_t device_bytes() const { return on_device ? weights_bytes + compute_bytes : 0; }
};

// The plan of `projector` with flash attention on or off, its buffers on the GPU backend when
// `on_device` (on `device`, "" meaning CUDA0). Never fails: a projector without a vision tower
// (audio only) has a compute figure of 0 and a basis that says it is not modelled.
ProjectorPlan plan_projector(const model::ProjectorFacts& projector, bool flash_attention,
                             bool on_device, const std::string& device = "");

}  // namespace gb10tune::plan
