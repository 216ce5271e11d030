#include "support/stand_in.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/environment.hpp"

namespace gb10tune::testing {

namespace fs = std::filesystem;

namespace {

ChildExit decode(int status) {
  ChildExit exit;
  if (WIFEXITED(status)) {
    exit.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  }
  return exit;
}

}  // namespace

fs::path stand_in_server_path() {
  return GB10TUNE_STAND_IN_SERVER;
}

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    throw std::runtime_error("socket() failed");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind 127.0.0.1:0");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

StandInServer::StandInServer(std::vector<std::string> args, std::map<std::string, std::string> env,
                             std::vector<std::string> unset, fs::path binary)
    : m_log(m_dir.path() / "llama-server.log") {
  std::vector<std::string> argv{binary.empty() ? stand_in_server_path().string() : binary.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  platform::Environment environment = platform::Environment::current();
  for (auto& [name, value] : env) {
    environment.set(name, value);
  }
  for (const std::string& name : unset) {
    environment.unset(name);
  }
  const std::vector<std::string> env_strings = environment.to_strings();

  std::vector<char*> argv_ptrs;
  for (std::string& arg : argv) {
    argv_ptrs.push_back(arg.data());
  }
  argv_ptrs.push_back(nullptr);
  std::vector<std::string> env_storage = env_strings;
  std::vector<char*> env_ptrs;
  for (std::string& entry : env_storage) {
    env_ptrs.push_back(entry.data());
  }
  env_ptrs.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, m_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // The child must not inherit a blocked or ignored SIGTERM from the test runner.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc =
      ::posix_spawn(&m_pid, argv_ptrs[0], &actions, &attr, argv_ptrs.data(), env_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    m_pid = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

StandInServer::~StandInServer() {
  if (m_pid > 0 && !m_exit) {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
  }
}

std::string StandInServer::log() const {
  return read_text(m_log);
}

bool StandInServer::wait_ready(int port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const http::Url url{"http", "127.0.0.1", port, ""};
  while (std::chrono::steady_clock::now() < deadline) {
    const auto health = http::http_get(url, "/health", std::chrono::milliseconds(500));
    if (health && health->status == 200) {
      return true;
    }
    if (wait_exit(std::chrono::milliseconds(0))) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::optional<ChildExit> StandInServer::wait_exit(std::chrono::milliseconds timeout) {
  if (m_exit) {
    return m_exit;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(m_pid, &status, WNOHANG);
    if (done == m_pid) {
      m_exit = decode(status);
      return m_exit;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void StandInServer::send(int signal) const {
  if (!m_exit) {
    ::kill(m_pid, signal);
  }
}

ChildExit StandInServer::stop(std::chrono::milliseconds grace) {
  send(SIGTERM);
  if (const auto exit = wait_exit(grace)) {
    return *exit;
  }
  send(SIGKILL);
  return wait_exit(std::chrono::seconds(10)).value_or(ChildExit{});
}

StandInRun run_stand_in(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env,
                        std::chrono::milliseconds timeout) {
  StandInServer server(args, env);
  StandInRun run;
  if (const auto exit = server.wait_exit(timeout)) {
    run.exit = *exit;
  } else {
    ADD_FAILURE() << "the stand-in did not exit within " << timeout.count() << " ms";
    run.exit = server.stop(std::chrono::milliseconds(100));
  }
  run.output = server.log();
  return run;
}

nlohmann::json read_record(const fs::path& path) {
  const std::string text = read_text(path);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    ADD_FAILURE() << "the record file " << path << " is not JSON: " << text;
    return nullptr;
  }
  return doc;
}

std::vector<std::string> stand_in_launch_args(const std::string& model, int port,
                                              bool shipped_profile) {
  return {"launch",
          "--model",
          model,
          "--llama-server",
          stand_in_server_path().string(),
          shipped_profile ? "--profile" : "--slots",
          shipped_profile ? "single-slot" : "1",
          "--ctx-per-slot",
          "4096",
          "--cache-ram",
          "0",
          "--reserve",
          "0",
          "--port",
          std::to_string(port > 0 ? port : free_tcp_port())};
}

int start_stand_in_through_launch(const launch::StatePaths& paths,
                                  const std::map<std::string, std::string>& env) {
  const int port = free_tcp_port();
  launch::StartRequest request;
  request.argv = {stand_in_server_path().string(), "--port", std::to_string(port)};
  request.env = platform::Environment::current();
  request.env.set("STANDIN_LOAD_MS", "100");
  for (const auto& [name, value] : env) {
    request.env.set(name, value);
  }
  request.paths = paths;
  request.url = http::Url{"http", "127.0.0.1", port, ""};
  const std::atomic<bool> never{false};
  const auto started = launch::start_server(request, {}, never);
  EXPECT_TRUE(started) << started.error().message;
  return started ? started->pid : 0;
}

}  // namespace gb10tune::testing
