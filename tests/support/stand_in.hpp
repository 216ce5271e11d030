// Test helpers around the stand-in llama-server (tests/support/stand_in_server): a free port,
// starting it as a child process, waiting for it, stopping it, reading its record file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/launch/launch_record.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {

// The stand-in's path (tests/stand-in/llama-server in the build tree).
std::filesystem::path stand_in_server_path();

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read, closed).
// Throws std::runtime_error when no socket can be opened.
int free_tcp_port();

// Starts the stand-in through launch::start_server on a free port, as `launch` does, with its
// state under `paths` and this process's environment plus STANDIN_LOAD_MS=100 and `env`.
// Returns its pid, 0 (with a test failure) when it did not start.
int start_stand_in_through_launch(const launch::StatePaths& paths,
                                  const std::map<std::string, std::string>& env = {});

// The arguments of `gb10tune launch` for `model` on the stand-in at `port` (0: a free one),
// planned small enough for any machine: single-slot, 4096 tokens, no prompt cache, no reserve.
// Without `shipped_profile` no --profile is given (the model's default profile, then --slots 1),
// as a user starting a model plainly.
std::vector<std::string> stand_in_launch_args(const std::string& model, int port = 0,
                                              bool shipped_profile = true);

// How a child ended.
struct ChildExit {
  int exit_status = -1;  // exit code, -1 when killed by a signal
  int signal = 0;        // terminating signal, 0 when it exited
};

// One stand-in llama-server run as a child process: argv[0] is the stand-in, `args` follow;
// the child gets this process's environment with `env` applied on top (an empty value still
// sets the variable) and `unset` removed; its stdout and stderr go to log_path(). The
// destructor kills (SIGKILL) and reaps it if it still runs.
class StandInServer {
 public:
  // Starts the child; throws std::runtime_error when posix_spawn fails. `binary` replaces the
  // stand-in's path as argv[0] (a copy of it elsewhere).
  StandInServer(std::vector<std::string> args, std::map<std::string, std::string> env = {},
                std::vector<std::string> unset = {}, std::filesystem::path binary = {});
  StandInServer(const StandInServer&) = delete;
  StandInServer& operator=(const StandInServer&) = delete;
  ~StandInServer();

  pid_t pid() const { return m_pid; }
  // The file its stdout and stderr are written to.
  const std::filesystem::path& log_path() const { return m_log; }
  // Everything it has logged so far.
  std::string log() const;
  // Polls GET http://127.0.0.1:<port>/health until 200; false when the timeout passes or the
  // child exits first.
  bool wait_ready(int port, std::chrono::milliseconds timeout);
  // Waits up to `timeout` for the child to exit on its own; nullopt while it still runs.
  std::optional<ChildExit> wait_exit(std::chrono::milliseconds timeout);
  // Sends `signal` (the child keeps running if it ignores it).
  void send(int signal) const;
  // SIGTERM, then SIGKILL after `grace`; reaps it and returns how it ended.
  ChildExit stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  TempDir m_dir;
  std::filesystem::path m_log;
  pid_t m_pid = -1;
  std::optional<ChildExit> m_exit;
};

// Runs the stand-in to completion with `args` and `env` (for --help, bad flags, crashes);
// returns its exit and its combined output.
struct StandInRun {
  ChildExit exit;
  std::string output;
};
StandInRun run_stand_in(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));

// The JSON document of a STANDIN_RECORD file; fails the test (and returns null) when it is
// missing or not JSON.
nlohmann::json read_record(const std::filesystem::path& path);

}  // namespace gb10tune::testing
