#include "gb10tune/server/server_build.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace gb10tune::server {

namespace {

// ELF dynamic string tables sit before the code; 8 MiB covers them in every build seen.
constexpr std::size_t kScanBytes = 8u << 20;

}  // namespace

CudaBuildFacts detect_cuda_build(const std::string& server_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path binary = fs::canonical(server_path, ec);
  const fs::path dir = (ec ? fs::path(server_path) : binary).parent_path();
  for (const fs::path& lib_dir : {dir, dir.parent_path() / "lib"}) {
    for (fs::directory_iterator it(lib_dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("libggml-cuda.so", 0) == 0) {
        return {true, name + " beside the binary"};
      }
    }
  }
  std::ifstream in(ec ? fs::path(server_path) : binary, std::ios::binary);
  if (!in) {
    return {false, "the binary could not be read"};
  }
  std::vector<char> head(kScanBytes);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const std::string_view text(head.data(), static_cast<std::size_t>(in.gcount()));
  constexpr std::array kMarkers{std::string_view{"libggml-cuda"}, std::string_view{"libcublas"},
                                std::string_view{"libcudart"}};
  for (const std::string_view marker : kMarkers) {
    if (text.find(marker) != std::string_view::npos) {
      return {true, "links " + std::string(marker)};
    }
  }
  return {false, "no libggml-cuda.so beside it, no CUDA library linked"};
}

}  // namespace gb10tune::server
