// Which backend a llama-server will put its buffers on: decides which compute buffers the plan
// counts (one CPU buffer, or CUDA0 + CUDA_Host) and whether the CUDA runtime's own memory is
// added. The one place that decision is made.
#pragma once

#include <optional>
#include <string>

#include "gb10tune/plan/compute_buffers.hpp"

namespace gb10tune::plan {

// What is known when the plan is made.
struct BackendEvidence {
  bool server_has_cuda = false;  // the llama-server build carries the CUDA backend
  std::string server_evidence;   // how that was seen ("libggml-cuda.so beside the binary", …)
  bool machine_has_gpu = false;  // the NVIDIA driver lists a GPU on this machine
  std::optional<long long> gpu_layers;  // -ngl as launch passes it; nullopt = llama.cpp's auto
};

// The backend and a one-line reason. CUDA only when the build has it, the machine has an
// NVIDIA GPU and layers are offloaded (-ngl unset/auto or > 0); CPU otherwise.
struct BackendChoice {
  PlanBackend backend = PlanBackend::cpu;
  std::string reason;
};

// Decides the backend from `evidence`; never fails.
BackendChoice choose_backend(const BackendEvidence& evidence);

}  // namespace gb10tune::plan
