#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

ProcessSnapshot take_snapshot(const platform::Sysroot& root, sys::ServerCandidate process) {
  ProcessSnapshot snapshot;
  const int pid = process.stat.pid;
  snapshot.process = std::move(process);
  if (auto env = sys::read_process_environ(root, pid)) {
    snapshot.env = std::move(env).value();
  } else {
    snapshot.env_error = env.error();
  }
  if (auto memory = sys::read_process_memory(root, pid)) {
    snapshot.memory = std::move(memory).value();
  } else {
    snapshot.memory_error = memory.error();
  }
  // A zombie's environ reads empty: what was read is only this process's if it is still the
  // same live process now.
  const auto again = sys::read_process_stat(root, pid);
  snapshot.changed = !again || again->start_time_ticks != snapshot.process.stat.start_time_ticks ||
                     again->exited();
  return snapshot;
}

}  // namespace gb10tune::verify
