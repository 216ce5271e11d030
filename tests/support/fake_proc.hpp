// Processes written into a temporary /proc tree (a TempDir used as a Sysroot), for tests of code
// that reads /proc/<pid>/{stat,status,exe,environ}.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "support/test_context.hpp"

namespace gb10tune::testing {

// The text of /proc/<pid>/stat: `comm` in `state` (S, Z, …), started at `start_ticks` (field 22).
std::string proc_stat_text(int pid, const std::string& comm, char state, std::uint64_t start_ticks);

// The /proc/<pid>/status text of a process of `uid` holding `rss_kb` (all anonymous).
std::string proc_status_text(const std::string& name, std::uint64_t rss_kb, unsigned uid);

// One process to write into the tree.
struct FakeProcess {
  int pid = 0;
  std::string comm = "llama-server";
  char state = 'S';
  std::uint64_t start_ticks = 777;
  std::uint64_t rss_kb = 1000;
  unsigned uid = 0;
  std::string exe;                             // the exe link's target; none when empty
  std::map<std::string, std::string> environ;  // its environment; no environ file when empty
};

// Writes proc/<pid>/stat, status, and exe and environ where given, under `root`.
void write_proc_process(const TempDir& root, const FakeProcess& process);

}  // namespace gb10tune::testing
