#include "support/test_context.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/app.hpp"
#include "gb10tune/bench/server_endpoint.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/fake_gpu.hpp"

namespace gb10tune::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "gb10tune-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  m_path = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

fs::path TempDir::write(const std::string& relative, const std::string& content,
                        bool executable) const {
  const fs::path path = m_path / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
  if (executable) {
    ::chmod(path.c_str(), 0755);
  }
  return path;
}

fs::path fixture(const std::string& relative) {
  return fs::path(GB10TUNE_FIXTURES_DIR) / relative;
}

fs::path sysroot_fixture(const std::string& scenario) {
  return fixture("sysroot/" + scenario);
}

std::string read_text(const fs::path& path) {
  std::optional<std::string> text = read_text_file(path);
  EXPECT_TRUE(text.has_value()) << "cannot read " << path;
  return text.value_or("");
}

CliResult run_cli_on(const std::string& scenario, const std::vector<std::string>& args,
                     const platform::Environment& env, bench::CaseRunner runner,
                     const std::function<void(cli::Context&)>& adjust) {
  return run_cli_at(sysroot_fixture(scenario), scenario, args, env, std::move(runner), adjust);
}

CliResult run_cli_at(const fs::path& sysroot, const std::string& machine,
                     const std::vector<std::string>& args, const platform::Environment& env,
                     bench::CaseRunner runner, const std::function<void(cli::Context&)>& adjust) {
  FakeGpuBackend gpu = fake_gpu_for(machine);
  std::ostringstream out;
  std::ostringstream err;
  cli::Context ctx;
  ctx.env = env;
  ctx.out = &out;
  ctx.err = &err;
  ctx.gpu = &gpu;
  ctx.uname_machine = "x86_64";
  ctx.now_iso8601 = [] { return std::string("2026-11-29T12:00:00Z"); };
  ctx.bandwidth_runner = runner ? std::move(runner) : [](const kernels::CaseSpec&) {
    ADD_FAILURE() << "a bandwidth case ran without a fake runner";
    return kernels::CaseResult{};
  };
  ctx.connect_server = bench::connect_http;  // the real client; tests may put a fake
  double clock = 1000;
  ctx.clock_seconds = [&clock] { return clock += 10; };  // every read advances 10 s
  if (adjust) {
    adjust(ctx);
  }

  std::vector<std::string> argv_storage{"gb10tune", "--sysroot", sysroot.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& arg : argv_storage) {
    argv.push_back(arg.c_str());
  }
  CliResult result;
  result.exit_code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), ctx);
  result.out = out.str();
  result.err = err.str();
  return result;
}

void expect_golden(const std::string& name, const std::string& actual) {
  const fs::path path = fs::path(GB10TUNE_FIXTURES_DIR).parent_path() / "cli" / "golden" / name;
  if (std::getenv("GB10TUNE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
  }
  EXPECT_EQ(actual, read_text(path)) << "golden file " << path
                                     << " differs; rerun with GB10TUNE_UPDATE_GOLDEN=1 after "
                                        "checking the change";
}

std::vector<std::string> tool_argv() {
  std::vector<std::string> argv;
  std::istringstream emulator(GB10TUNE_TEST_EMULATOR);
  for (std::string word; emulator >> word;) {
    argv.push_back(word);
  }
  argv.push_back(GB10TUNE_BINARY);
  return argv;
}

CliResult run_binary(const std::vector<std::string>& args) {
  return run_binary(args, {});
}

CliResult run_binary(const std::vector<std::string>& args,
                     const std::vector<std::string>& env_changes) {
  // env(1) applies NAME=VALUE and -u NAME before it runs the binary: no shell involved.
  // Under an emulator a preload is the emulated program's (qemu's -E), not the emulator's own.
  std::vector<std::string> argv;
  std::vector<std::string> preload;
  const bool emulated = !std::string_view(GB10TUNE_TEST_EMULATOR).empty();
  if (!env_changes.empty()) {
    argv.push_back("env");
    for (const auto& change : env_changes) {
      (emulated && change.starts_with("LD_PRELOAD=") ? preload : argv).push_back(change);
    }
  }
  std::vector<std::string> tool = tool_argv();
  for (const auto& change : preload) {
    tool.insert(tool.end() - 1, {"-E", change});
  }
  argv.insert(argv.end(), tool.begin(), tool.end());
  argv.insert(argv.end(), args.begin(), args.end());
  const auto run = platform::run_capture(argv, std::chrono::seconds(60), 4 * 1024 * 1024);
  CliResult result;
  if (!run) {
    ADD_FAILURE() << run.error().message;
    return result;
  }
  result.exit_code = run->exit_status;
  result.out = run->output;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool process_alive(int pid) {
  const auto stat = sys::read_process_stat(platform::Sysroot(), pid);
  return stat && !stat->exited();
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : m_name(name) {
  if (const char* old = std::getenv(name)) {
    m_old = old;
  }
  ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (m_old) {
    ::setenv(m_name, m_old->c_str(), 1);
  } else {
    ::unsetenv(m_name);
  }
}

}  // namespace gb10tune::testing
