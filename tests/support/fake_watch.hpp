// Fakes for the watch supervisor: a clock that jumps to each tick at once (and lets the test
// change the world before each sample), and a ServerControl that records what was asked of it
// and answers as the test says.
#pragma once

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gb10tune/watch/server_control.hpp"
#include "gb10tune/watch/watch_clock.hpp"

namespace gb10tune::testing {

// A clock that never sleeps: waits jump to their end.
class FakeWatchClock final : public watch::WatchClock {
 public:
  double now_s() const override { return m_now; }
  // Jumps to `t_s`, then calls before_sample(n) for the n-th wait (0-based); false from the
  // wait numbered interrupt_at on.
  bool wait_until(double t_s) override;
  void sleep_for(double seconds) override;

  std::function<void(int n)> before_sample;
  std::optional<int> interrupt_at;
  std::vector<double> slept;  // every sleep_for, in order

 private:
  double m_now = 0;
  int m_waits = 0;
};

// What FakeServerControl::start answers: the outcome once done() was asked `polls` times
// (-1: only once aborted, as a server that never becomes ready).
struct FakeStartScript {
  Expected<launch::StartResult> outcome = launch::StartResult{};
  int polls = 0;
};

// A ServerControl that touches nothing but the lock file under its paths.
class FakeServerControl final : public watch::ServerControl {
 public:
  explicit FakeServerControl(launch::StatePaths paths) : m_paths(std::move(paths)) {}

  launch::PidFileStatus pid_file() override;
  void clear_stale() override;
  Expected<launch::LaunchLock> lock() override;
  // Records the grace; answers stop_answer and, when it is a success, the pid file is gone.
  Expected<launch::StopResult> stop(std::chrono::milliseconds grace) override;
  // Records the request; answers with the next of `starts` (a failure once they are used up).
  std::unique_ptr<watch::PendingStart> start(launch::StartRequest request) override;
  // The exit put in `exits` for pid, once.
  std::optional<platform::ChildExit> reap(int pid) override;
  void note_in_log(const std::filesystem::path& path, const std::string& line) override;

  launch::PidFileStatus status;  // what pid_file() answers once next_statuses are used up
  std::deque<launch::PidFileStatus> next_statuses;  // answered first, one a read
  int stale_cleared = 0;
  std::optional<Error> lock_error;  // lock() fails with it when set; else the real lock
  Expected<launch::StopResult> stop_answer = launch::StopResult{};
  std::vector<std::chrono::milliseconds> stops;
  std::vector<FakeStartScript> starts;
  std::vector<launch::StartRequest> start_requests;
  int aborted_starts = 0;
  std::map<int, platform::ChildExit> exits;
  std::vector<int> reaped;  // every pid reap() was asked about
  std::vector<std::pair<std::filesystem::path, std::string>> log_notes;

 private:
  launch::StatePaths m_paths;
};

// The status of a pid file whose server `pid` runs, recorded with `record`.
launch::PidFileStatus running_status(int pid, launch::LaunchRecord record);

}  // namespace gb10tune::testing
