#include "support/fake_proc.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace gb10tune::testing {

std::string proc_stat_text(int pid, const std::string& comm, char state,
                           std::uint64_t start_ticks) {
  std::string fields = fmt::format("{} ({}) {} 1 {} {} 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 {}",
                                   pid, comm, state, pid, pid, start_ticks);
  for (int i = 0; i < 30; ++i) {
    fields += " 0";
  }
  return fields + "\n";
}

std::string proc_status_text(const std::string& name, std::uint64_t rss_kb, unsigned uid) {
  return fmt::format(
      "Name:\t{0}\nUid:\t{1}\t{1}\t{1}\t{1}\nVmRSS:\t{2} kB\nRssAnon:\t{2} kB\nRssFile:\t0 kB\n"
      "RssShmem:\t0 kB\n",
      name, uid, rss_kb);
}

void write_proc_process(const TempDir& root, const FakeProcess& process) {
  const std::string dir = fmt::format("proc/{}/", process.pid);
  root.write(dir + "stat",
             proc_stat_text(process.pid, process.comm, process.state, process.start_ticks));
  root.write(dir + "status", proc_status_text(process.comm, process.rss_kb, process.uid));
  if (!process.exe.empty()) {
    std::filesystem::create_symlink(process.exe, root.path() / (dir + "exe"));
  }
  if (!process.environ.empty()) {
    std::string environ;
    for (const auto& [name, value] : process.environ) {
      environ += name + "=" + value + std::string(1, '\0');
    }
    root.write(dir + "environ", environ);
  }
}

}  // namespace gb10tune::testing
