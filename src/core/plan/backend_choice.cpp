#include "gb10tune/plan/backend_choice.hpp"

#include <fmt/format.h>

namespace gb10tune::plan {

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
  if (evidence.gpu_layers && *evidence.gpu_layers == 0) {
    return {PlanBackend::cpu,
            "a CUDA build on a GPU machine, but -ngl 0 keeps every layer on "
            "the CPU"};
  }
  return {PlanBackend::cuda,
          fmt::format("a CUDA build ({}) on a machine with an NVIDIA GPU, layers offloaded "
                      "(-ngl {})",
                      evidence.server_evidence,
                      evidence.gpu_layers ? std::to_string(*evidence.gpu_layers) : "auto")};
}

}  // namespace gb10tune::plan
