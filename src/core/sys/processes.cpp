#include "gb10tune/sys/processes.hpp"

#include <filesystem>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace fs = std::filesystem;

std::vector<ProcessEntry> find_processes(const platform::Sysroot& root, std::string_view name) {
  std::vector<ProcessEntry> found;
  const auto entries = root.list_dir("/proc");
  if (!entries) {
    return found;
  }
  // comm is cut at 15 characters by the kernel.
  const std::string_view comm_name = name.substr(0, 15);
  for (const std::string& entry : *entries) {
    const auto pid = parse_u64(entry);
    if (!pid || *pid == 0 || *pid > 0x7fffffff) {
      continue;
    }
    const std::string base = "/proc/" + entry;
    ProcessEntry process;
    process.pid = static_cast<int>(*pid);
    if (const auto comm = root.read_file(base + "/comm", 256)) {
      process.comm = std::string(trim(*comm));
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink(root.resolve(base + "/exe"), ec);
    if (!ec) {
      process.exe = exe.string();
    }
    std::string exe_base = fs::path(process.exe).filename().string();
    // A replaced binary reads "/path/llama-server (deleted)".
    if (const std::size_t deleted = exe_base.find(" (deleted)"); deleted != std::string::npos) {
      exe_base.resize(deleted);
    }
    if (process.comm == comm_name || exe_base == name) {
      found.push_back(std::move(process));
    }
  }
  return found;
}

}  // namespace gb10tune::sys
