#include "gb10tune/watch/server_control.hpp"

#include <atomic>
#include <thread>

#include "gb10tune/platform/log_file.hpp"

namespace gb10tune::watch {

namespace {

// launch::start_server on a thread of its own, so that sampling (and the floor) go on while
// the server loads.
class ThreadedStart final : public PendingStart {
 public:
  explicit ThreadedStart(launch::StartRequest request)
      : m_thread([this, request = std::move(request)] {
          m_result = launch::start_server(request, {}, m_abort);
          m_done = true;
        }) {}
  ThreadedStart(const ThreadedStart&) = delete;
  ThreadedStart& operator=(const ThreadedStart&) = delete;
  ~ThreadedStart() override {
    m_abort = true;
    finish();
  }

  bool done() const override { return m_done; }
  void abort() override { m_abort = true; }
  void finish() override {
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }
  const Expected<launch::StartResult>& result() const override { return *m_result; }

 private:
  std::atomic<bool> m_abort{false};
  std::atomic<bool> m_done{false};
  std::optional<Expected<launch::StartResult>> m_result;
  std::thread m_thread;  // last: starts once the members it uses exist
};

}  // namespace

SystemServerControl::SystemServerControl(platform::Sysroot root, launch::StatePaths paths)
    : m_root(std::move(root)), m_paths(std::move(paths)) {}

launch::PidFileStatus SystemServerControl::pid_file() {
  return launch::check_pid_file(m_root, m_paths);
}

void SystemServerControl::clear_stale() {
  launch::clear_launch_state(m_paths);
}

Expected<launch::LaunchLock> SystemServerControl::lock() {
  return launch::LaunchLock::acquire(m_paths);
}

Expected<launch::StopResult> SystemServerControl::stop(std::chrono::milliseconds grace) {
  return launch::stop_server(m_root, m_paths, grace, "watch");
}

std::unique_ptr<PendingStart> SystemServerControl::start(launch::StartRequest request) {
  return std::make_unique<ThreadedStart>(std::move(request));
}

std::optional<platform::ChildExit> SystemServerControl::reap(int pid) {
  return platform::reap_exited_child(pid);
}

void SystemServerControl::note_in_log(const std::filesystem::path& path, const std::string& line) {
  platform::append_line(path, line);
}

}  // namespace gb10tune::watch
