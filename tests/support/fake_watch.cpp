#include "support/fake_watch.hpp"

#include <algorithm>

namespace gb10tune::testing {

namespace {

class FakeStart final : public watch::PendingStart {
 public:
  FakeStart(FakeStartScript script, int& aborted)
      : m_outcome(std::move(script.outcome)), m_polls(script.polls), m_aborted(aborted) {}

  bool done() const override {
    if (m_polls == 0) {
      return true;
    }
    if (m_polls > 0) {
      --m_polls;
    }
    return false;
  }
  void abort() override {
    if (m_polls != 0) {
      ++m_aborted;
      m_outcome = Error{"the start was aborted\nsecond line", ExitCode::interrupted};
      m_polls = 0;
    }
  }
  void finish() override { m_polls = 0; }
  const Expected<launch::StartResult>& result() const override { return m_outcome; }

 private:
  Expected<launch::StartResult> m_outcome;
  mutable int m_polls;
  int& m_aborted;
};

}  // namespace

bool FakeWatchClock::wait_until(double t_s) {
  m_now = std::max(m_now, t_s);
  const int n = m_waits++;
  if (before_sample) {
    before_sample(n);
  }
  return !(interrupt_at && n >= *interrupt_at);
}

void FakeWatchClock::sleep_for(double seconds) {
  slept.push_back(seconds);
  m_now += seconds;
}

launch::PidFileStatus FakeServerControl::pid_file() {
  if (!next_statuses.empty()) {
    launch::PidFileStatus next = std::move(next_statuses.front());
    next_statuses.pop_front();
    return next;
  }
  return status;
}

void FakeServerControl::clear_stale() {
  ++stale_cleared;
  status = launch::PidFileStatus{};
}

Expected<launch::LaunchLock> FakeServerControl::lock() {
  if (lock_error) {
    return *lock_error;
  }
  return launch::LaunchLock::acquire(m_paths);
}

Expected<launch::StopResult> FakeServerControl::stop(std::chrono::milliseconds grace) {
  stops.push_back(grace);
  if (stop_answer) {
    status = launch::PidFileStatus{};
  }
  return stop_answer;
}

std::unique_ptr<watch::PendingStart> FakeServerControl::start(launch::StartRequest request) {
  start_requests.push_back(std::move(request));
  FakeStartScript script;
  if (start_requests.size() <= starts.size()) {
    script = starts[start_requests.size() - 1];
  } else {
    script.outcome = Error{"no start was scripted", ExitCode::server_failed};
  }
  return std::make_unique<FakeStart>(std::move(script), aborted_starts);
}

std::optional<platform::ChildExit> FakeServerControl::reap(int pid) {
  reaped.push_back(pid);
  const auto found = exits.find(pid);
  if (found == exits.end()) {
    return std::nullopt;
  }
  const platform::ChildExit exit = found->second;
  exits.erase(found);
  return exit;
}

void FakeServerControl::note_in_log(const std::filesystem::path& path, const std::string& line) {
  log_notes.emplace_back(path, line);
}

launch::PidFileStatus running_status(int pid, launch::LaunchRecord record) {
  launch::PidFileStatus status;
  status.state = launch::PidFileState::running;
  status.pid = pid;
  record.pid = pid;
  status.server = launch::RunningServer{pid, std::move(record)};
  return status;
}

}  // namespace gb10tune::testing
