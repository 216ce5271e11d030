#include "gb10tune/plan/backend_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gb10tune::plan {

bool gpus_hidden(const std::vector<std::string>& devices,
                 const std::optional<std::string>& cuda_visible_devices) {
  return std::find(devices.begin(), devices.end(), "none") != devices.end() ||
         (cuda_visible_devices && cuda_visible_devices->empty());
}

BackendChoice choose_backend(const BackendEvidence& evidence) {
  if (!evidence.server_has_cuda) {
    return {PlanBackend::cpu,
            fmt::format("llama-server has no CUDA backend ({})", evidence.server_evidence)};
  }
  if (!evidence.machine_has_gpu) {
    return {PlanBackend::cpu,
            fmt::format("a CUDA build ({}), but the NVIDIA driver lists no GPU here",
                        evidence.server_evidence)};
  }
  if (evidence.gpus_hidden) {
    return {PlanBackend::cpu,
            "a CUDA build on a GPU machine, but --device none or an empty "
            "CUDA_VISIBLE_DEVICES hides the GPU from llama-server"};
  }
  if (evidence.gpu_layers && *evidence.gpu_layers == 0) {
    return {PlanBackend::cuda,
            fmt::format("a CUDA build ({}) on a machine with an NVIDIA GPU: with -ngl 0 the "
                        "layers stay in host memory, but the big batches of their ops run on "
                        "the GPU (op offload)",
                        evidence.server_evidence)};
  }
  return {PlanBackend::cuda,
          fmt::format("a CUDA build ({}) on a machine with an NVIDIA GPU, layers offloaded "
                      "(-ngl {})",
                      evidence.server_evidence,
                      evidence.gpu_layers ? std::to_string(*evidence.gpu_layers) : "auto")};
}

}  // namespace gb10tune::plan
