// How long verify's own work takes on a busy machine: the /proc scan for llama-server and
// every process check, over a generated captured tree of 500 processes (one of them the
// server), with NVML answered from data. The claim (issue 6): well under 100 ms.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gb10tune/verify/verify.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

std::string stat_line(int pid, const std::string& comm, std::uint64_t start) {
  std::string line = std::to_string(pid) + " (" + comm + ") S 1 " + std::to_string(pid) +
                     " 1 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 " + std::to_string(start);
  for (int i = 0; i < 30; ++i) {
    line += " 0";
  }
  return line + "\n";
}

// A captured machine: `count` processes, the last of them llama-server, removed at exit.
class BusyMachine {
 public:
  explicit BusyMachine(int count) {
    m_root = fs::temp_directory_path() / ("gb10tune-verify-bench-" + std::to_string(::getpid()));
    const std::string env = "HOME=/home/ada\0PATH=/usr/bin:/bin\0LANG=C.UTF-8\0"s;
    const std::string status =
        "Name:\tx\nState:\tS (sleeping)\nVmRSS:\t  20480 kB\nRssAnon:\t10240 kB\nRssFile:\t"
        "10240 kB\nRssShmem:\t0 kB\n";
    for (int i = 0; i < count; ++i) {
      const int pid = 1000 + i;
      const bool server = i == count - 1;
      const fs::path dir = m_root / "proc" / std::to_string(pid);
      const std::string comm = server ? "llama-server" : (i % 3 == 0 ? "bash" : "python3");
      write(dir / "stat", stat_line(pid, comm, 5000 + static_cast<std::uint64_t>(i)));
      write(dir / "cmdline", server ? "/opt/llama.cpp/build/bin/llama-server\0-ngl\0"
                                      "99\0-fa\0on\0"s
                                    : comm + "\0-c\0echo llama-server\0"s);
      write(dir / "environ", env);
      write(dir / "status", status);
      fs::create_symlink(server ? "/opt/llama.cpp/build/bin/llama-server" : "/usr/bin/" + comm,
                         dir / "exe");
    }
  }
  ~BusyMachine() {
    std::error_code ec;
    fs::remove_all(m_root, ec);
  }
  const fs::path& root() const { return m_root; }

 private:
  fs::path m_root;
};

void BM_VerifyScanAndChecks(benchmark::State& state) {
  const BusyMachine machine(static_cast<int>(state.range(0)));
  const gb10tune::platform::Sysroot root(machine.root());
  gb10tune::verify::VerifyServices services;
  services.root = &root;
  services.nvml = [] {
    gb10tune::gpu::NvmlReport nvml;
    nvml.loaded = true;
    return nvml;
  };
  for (auto _ : state) {
    const auto result = gb10tune::verify::run_verify({}, services);
    if (result.servers.size() != 1) {
      state.SkipWithError("the generated server was not found");
      break;
    }
    benchmark::DoNotOptimize(result);
  }
  state.SetLabel(std::to_string(state.range(0)) + " processes");
}
BENCHMARK(BM_VerifyScanAndChecks)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
