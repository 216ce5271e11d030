// Which backend a llama-server will put its buffers on: decides which compute buffers the plan
// counts (one CPU buffer, or CUDA0 + CUDA_Host) and whether the CUDA runtime's own memory is
// added. The one place that decision is made.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gb10tune/plan/compute_buffers.hpp"

namespace gb10tune::plan {

// What is known when the plan is made.
struct BackendEvidence {
  bool server_has_cuda = false;  // the llama-server build carries the CUDA backend
  std::string server_evidence;   // how that was seen ("libggml-cuda.so beside the binary", …)
  bool machine_has_gpu = false;  // the NVIDIA driver lists a GPU on this machine
  std::optional<long long> gpu_layers;  // -ngl as launch passes it; nullopt = llama.cpp's auto
  // --device none (-dev none) among the server's arguments, or CUDA_VISIBLE_DEVICES set and
  // empty in its environment: llama.cpp then creates no CUDA backend
  bool gpus_hidden = false;
};

// The backend and a one-line reason. CUDA when the build has it, the machine has an NVIDIA GPU
// and the server sees it, whatever -ngl says: with -ngl 0 llama.cpp still creates the CUDA
// backend, and its scheduler runs the big-batch ops of the CPU layers on the GPU (op offload,
// the CUDA0 compute buffer and the CUDA runtime on the device); CPU otherwise.
struct BackendChoice {
  PlanBackend backend = PlanBackend::cpu;
  std::string reason;
};

// True when llama-server will see no GPU: `devices` (its --device / -dev names) holds "none",
// or `cuda_visible_devices` (that variable in its environment) is set and empty. Never fails.
bool gpus_hidden(const std::vector<std::string>& devices,
                 const std::optional<std::string>& cuda_visible_devices);

// Decides the backend from `evidence`; never fails.
BackendChoice choose_backend(const BackendEvidence& evidence);

}  // namespace gb10tune::plan
