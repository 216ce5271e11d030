// Ctrl-C handling for long jobs: SIGINT and SIGTERM set a flag that the job polls between
// steps, so that every allocation is freed on the way out.
#pragma once

#include <atomic>

namespace gb10tune::platform {

// Installs the handlers for its lifetime and restores the previous ones after. One at a time.
class InterruptGuard {
 public:
  InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  ~InterruptGuard();

  // Becomes true at the first SIGINT/SIGTERM. A second signal ends the process at once.
  const std::atomic<bool>& flag() const;

 private:
  struct Saved;
  Saved* m_saved;
};

}  // namespace gb10tune::platform
