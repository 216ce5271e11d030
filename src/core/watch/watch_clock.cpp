#include "gb10tune/watch/watch_clock.hpp"

#include <algorithm>
#include <thread>

namespace gb10tune::watch {

namespace {

using Steady = std::chrono::steady_clock;

// How often a wait looks at the interrupt flag.
constexpr std::chrono::milliseconds kInterruptPoll{100};

}  // namespace

SteadyWatchClock::SteadyWatchClock() : m_started(Steady::now()) {}

double SteadyWatchClock::now_s() const {
  return std::chrono::duration<double>(Steady::now() - m_started).count();
}

bool SteadyWatchClock::wait_until(double t_s) {
  const auto tick =
      m_started + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(t_s));
  while (Steady::now() < tick && !m_guard.flag()) {
    std::this_thread::sleep_for(std::min<Steady::duration>(tick - Steady::now(), kInterruptPoll));
  }
  return !m_guard.flag();
}

void SteadyWatchClock::sleep_for(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace gb10tune::watch
