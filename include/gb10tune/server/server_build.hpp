// What a llama-server build was compiled with, seen from its files without running it (running
// a CUDA build initializes the driver, which costs more than the whole plan).
#pragma once

#include <string>

namespace gb10tune::server {

// Whether the build carries ggml's CUDA backend, and the evidence.
struct CudaBuildFacts {
  bool cuda = false;
  std::string evidence;  // "libggml-cuda.so beside the binary", "links libcublas", …
};

// Looks for libggml-cuda.so* beside `server_path` (a build with shared libraries or dynamically
// loaded backends), then for CUDA libraries in the dynamic-linking strings near the start of
// the binary (a static build links libcudart/libcublas dynamically). Unreadable files count as
// "no CUDA" with the reason.
CudaBuildFacts detect_cuda_build(const std::string& server_path);

}  // namespace gb10tune::server
