// Test helpers: temporary directories, fixture paths, and running the CLI in-process
// against a fixture machine.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/bench/bandwidth_bench.hpp"
#include "gb10tune/platform/environment.hpp"

namespace gb10tune::cli {
struct Context;
}

namespace gb10tune::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return m_path; }
  // Writes `content` to path()/relative (parents created); returns the full path.
  std::filesystem::path write(const std::string& relative, const std::string& content,
                              bool executable = false) const;

 private:
  std::filesystem::path m_path;
};

// tests/fixtures/<relative>.
std::filesystem::path fixture(const std::string& relative);

// The fixture sysroot of a scenario: tests/fixtures/sysroot/<scenario>.
std::filesystem::path sysroot_fixture(const std::string& scenario);

// The text of a file; fails the test when it cannot be read.
std::string read_text(const std::filesystem::path& path);

// Whether `text` contains `part`.
bool contains(const std::string& text, const std::string& part);
// Whether process `pid` exists and has not exited (a zombie counts as gone).
bool process_alive(int pid);

// Sets an environment variable of this process (and so of run_binary's children) for a scope,
// restoring the old value (or its absence) at the end.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv();

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// What one in-process CLI run produced.
struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `gb10tune args…` in-process against the fixture machine `scenario` (its sysroot and
// fake GPU) with environment `env` and a fixed clock. Bandwidth cases go to `runner` (none:
// any case fails the test); `adjust` may change the context last (a fake server, say).
CliResult run_cli_on(const std::string& scenario, const std::vector<std::string>& args,
                     const platform::Environment& env, bench::CaseRunner runner = {},
                     const std::function<void(cli::Context&)>& adjust = {});
// The same against any sysroot (a temporary tree, or "/" for this machine's live /proc), with
// the fake GPU of fixture machine `machine`.
CliResult run_cli_at(const std::filesystem::path& sysroot, const std::string& machine,
                     const std::vector<std::string>& args, const platform::Environment& env,
                     bench::CaseRunner runner = {},
                     const std::function<void(cli::Context&)>& adjust = {});

// Compares `actual` with tests/cli/golden/<name>; GB10TUNE_UPDATE_GOLDEN=1 rewrites the file
// (review the diff before committing it).
void expect_golden(const std::string& name, const std::string& actual);

// The words that run the built gb10tune: its path, behind the emulator in a cross build
// (GB10TUNE_TEST_EMULATOR, e.g. qemu-aarch64), which a child of this test cannot exec directly.
std::vector<std::string> tool_argv();

// Runs the real gb10tune binary with `args` (no shell), capturing stdout+stderr.
CliResult run_binary(const std::vector<std::string>& args);
// The same with the environment changed: "NAME=VALUE" sets, "-u" "NAME" removes (env(1)).
CliResult run_binary(const std::vector<std::string>& args,
                     const std::vector<std::string>& env_changes);

}  // namespace gb10tune::testing
