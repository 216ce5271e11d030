// launch's loading progress: on a terminal one line redrawn in place (\r, clear to the end of
// the line, elided to the width), on a pipe a line only when the stage changes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <thread>

#include "gb10tune/platform/child_process.hpp"
#include "gb10tune/util/strings.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// A model, a state directory and the launch command for the stand-in loading for `load_ms`.
struct ProgressFixture {
  TempDir dir;
  std::string model = (dir.path() / "m.gguf").string();
  std::map<std::string, std::string> env;
  std::vector<std::string> args;

  explicit ProgressFixture(int load_ms) {
    tiny_qwen35_model().write(model);
    env = {{"XDG_STATE_HOME", (dir.path() / "state").string()},
           {"XDG_CONFIG_HOME", (dir.path() / "config").string()},
           {"STANDIN_LOAD_MS", std::to_string(load_ms)}};
    args = stand_in_launch_args(model);
  }

  std::vector<std::string> env_changes() const {
    std::vector<std::string> out;
    for (const auto& [name, value] : env) {
      out.push_back(name + "=" + value);
    }
    return out;
  }

  ~ProgressFixture() { run_binary({"stop"}, env_changes()); }
};

// The lines of `text` (split at '\n') that hold `part`.
std::size_t lines_holding(const std::string& text, const std::string& part) {
  const std::vector<std::string_view> lines = split(text, '\n');
  return static_cast<std::size_t>(std::count_if(
      lines.begin(), lines.end(),
      [&](std::string_view line) { return line.find(part) != std::string_view::npos; }));
}

// Runs `args` with stdout and stderr on a pseudo-terminal `columns` wide (no output
// post-processing, so '\n' stays '\n'); returns everything written and the exit status.
std::pair<std::string, int> run_on_terminal(const ProgressFixture& f, unsigned short columns) {
  int master = -1;
  int slave = -1;
  winsize size{};
  size.ws_row = 24;
  size.ws_col = columns;
  if (::openpty(&master, &slave, nullptr, nullptr, &size) != 0) {
    ADD_FAILURE() << "openpty failed";
    return {"", -1};
  }
  termios mode{};
  ::tcgetattr(slave, &mode);
  mode.c_oflag &= ~static_cast<tcflag_t>(OPOST);
  ::tcsetattr(slave, TCSANOW, &mode);
  std::string output;
  std::thread reader([master, &output] {
    char buffer[4096];
    while (true) {
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) {
        break;  // EIO once every copy of the slave is closed
      }
      output.append(buffer, static_cast<std::size_t>(n));
    }
  });
  std::vector<std::string> argv = tool_argv();
  argv.insert(argv.end(), f.args.begin(), f.args.end());
  platform::Environment env = platform::Environment::current();
  for (const auto& [name, value] : f.env) {
    env.set(name, value);
  }
  env.set("TERM", "xterm");
  env.unset("NO_COLOR");
  int status = -1;
  if (auto child = platform::Child::spawn(argv, env.to_strings(), slave)) {
    ::close(slave);
    for (int i = 0; i < 3000; ++i) {
      if (const auto exit = child->poll()) {
        status = exit->exit_status;
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
  } else {
    ADD_FAILURE() << child.error().message;
    ::close(slave);
  }
  reader.join();
  ::close(master);
  return {output, status};
}

TEST(CliLaunchProgress, OnATerminalOneLineIsRedrawnInPlace) {
  ProgressFixture f(3000);
  const auto [output, status] = run_on_terminal(f, 60);
  ASSERT_EQ(status, 0) << output;
  EXPECT_TRUE(contains(output, "llama-server is ready")) << output;
  // Redrawn: several carriage returns, each clearing the rest of the line, on one line.
  EXPECT_GE(std::count(output.begin(), output.end(), '\r'), 3) << output;
  EXPECT_TRUE(contains(output, "\x1b[K")) << output;
  EXPECT_EQ(lines_holding(output, "gb10tune launch:"), 1u) << output;
  EXPECT_TRUE(contains(output, "loading model")) << output;
  // Every redraw fits the 60 columns (the "…" of an elision counts as one).
  std::size_t start = 0;
  while ((start = output.find('\r', start)) != std::string::npos) {
    const std::size_t end = output.find_first_of("\r\n", start + 1);
    std::string drawn = output.substr(start + 1, end - start - 1);
    if (const auto clear = drawn.find("\x1b[K"); clear != std::string::npos) {
      drawn.erase(clear);
    }
    const auto columns = std::count_if(drawn.begin(), drawn.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    });
    EXPECT_LE(columns, 60) << "'" << drawn << "'";
    start = start + 1;
  }
}

TEST(CliLaunchProgress, OnAPipeALineOnlyWhenTheStageChanges) {
  ProgressFixture f(5000);
  const auto result = run_binary(f.args, f.env_changes());
  ASSERT_EQ(result.exit_code, 0) << result.out;
  EXPECT_EQ(result.out.find('\r'), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("\x1b["), std::string::npos) << result.out;
  // One line per stage the stand-in's log shows (starting, loading model, loading tensors,
  // initializing slots, loaded: 5 at most), not one per second.
  const std::size_t progress = lines_holding(result.out, "gb10tune launch:");
  EXPECT_GE(progress, 2u) << result.out;
  EXPECT_LE(progress, 5u) << "a 5 s load printed " << progress << " lines:\n" << result.out;
  EXPECT_TRUE(contains(result.out, "gb10tune launch: loading tensors")) << result.out;
}

}  // namespace
}  // namespace gb10tune::testing
