#include "support/background_run.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

namespace gb10tune::testing {

BackgroundRun::BackgroundRun(const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = tool_argv();
  argv.insert(argv.end(), args.begin(), args.end());
  platform::Environment environment = platform::Environment::current();
  for (const auto& [name, value] : env) {
    environment.set(name, value);
  }
  const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  auto spawned = platform::Child::spawn(argv, environment.to_strings(), fd);
  ::close(fd);
  EXPECT_TRUE(spawned) << spawned.error().message;
  if (spawned) {
    child.emplace(std::move(*spawned));
  }
}

BackgroundRun::~BackgroundRun() {
  if (child && !child->poll()) {
    child->terminate(std::chrono::seconds(2));
  }
}

std::optional<platform::ChildExit> BackgroundRun::wait(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (auto exit = child->poll()) {
      return exit;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

bool BackgroundRun::wait_for_output(const std::string& part, std::chrono::milliseconds limit) {
  // The output is read before the exit is polled: what it printed just before ending counts.
  const auto printed_or_ended = [&] {
    return file_contains(output, part) || (child && child->poll().has_value());
  };
  return wait_until(printed_or_ended, limit) && file_contains(output, part);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool wait_for_exec(int pid, const std::string& name, std::chrono::milliseconds limit) {
  const std::filesystem::path exe = "/proc/" + std::to_string(pid) + "/exe";
  return wait_until(
      [&] {
        std::error_code error;
        return std::filesystem::read_symlink(exe, error).filename() == name;
      },
      limit);
}

bool file_contains(const std::filesystem::path& path, const std::string& part) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str().find(part) != std::string::npos;
}

void reap_child(int pid, std::chrono::milliseconds limit) {
  int status = 0;
  if (!wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, limit)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
}

}  // namespace gb10tune::testing
