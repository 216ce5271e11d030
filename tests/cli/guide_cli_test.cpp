// docs/gb10-guide.md, run: every command of the guide's `sh` blocks, in order, against the
// stand-in llama-server and a tiny model, exiting 0 as the guide says. A command the test cannot
// run here must be marked `# needs: WHAT` with a reason the guide's table explains; an unmarked
// command that is neither gb10tune nor `mkdir -p` fails the test, and so does a marked gb10tune
// command whose options its --help does not list.
//
// What the test puts in place of a user's machine (the substitutions):
//   - HOME is a fresh folder, and `~/` is expanded to it as a shell would; the XDG_* variables
//     are unset, so state and configuration go to ~/.local/state and ~/.config as a user's do.
//   - ~/models/Qwen3.8-27B-Q4_K_M.gguf is the tiny qwen35 model with an MTP head
//     (tiny_qwen35_model(), 1.8 MB) under the guide's file name, so that tune's profile gets the
//     name the guide shows.
//   - ~/llama.cpp/build/bin/llama-server is a copy of the stand-in llama-server, loading in
//     0.1 s, its system_info line listing every CPU feature verify knows (a build made for this
//     CPU, K11), and its decode rate following its flags (STANDIN_SPEED) so that tune finds a
//     winner as it would on a real server.
//   - port 8080 (`--port 8080`) is a free port of this machine.
//   - The commands that plan against memory (probe, plan, launch, tune) see the captured GB10's
//     /proc (tests/fixtures/sysroot/gb10: 112.5 GB MemAvailable, its CPU) through --sysroot, not
//     this machine's, whose memory is whatever the test machine has; the commands that look at
//     the running server (verify, bench, watch, stop) read this machine's /proc, where the
//     stand-in runs.
//   - `> FILE` is applied by sh, as in the user's shell; `mkdir -p DIR` is done by the test.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gb10tune/platform/process.hpp"
#include "gb10tune/util/strings.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::testing {
namespace {

namespace fs = std::filesystem;

// The reasons a command may not run here, as the guide's table lists them.
const std::set<std::string> kGuideMarks = {"gb10", "network", "two-sparks", "systemd"};

// One command line of the guide.
struct GuideCommand {
  std::string text;  // the line as written, without its comment
  std::string mark;  // the WHAT of `# needs: WHAT`, empty when unmarked
  std::string line;  // the whole line, for messages
};

// Every line of the guide's ```sh blocks, in order.
std::vector<GuideCommand> guide_commands(const std::string& guide) {
  std::vector<GuideCommand> commands;
  bool in_sh = false;
  for (const std::string_view raw : split(guide, '\n')) {
    const std::string line(trim(raw));
    if (starts_with(line, "```")) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (!in_sh || line.empty() || starts_with(line, "#")) {
      continue;
    }
    GuideCommand command;
    command.line = line;
    const auto comment = line.find(" # ");
    command.text = std::string(trim(line.substr(0, comment)));
    if (comment != std::string::npos) {
      static const std::regex kNeeds(R"(#\s*needs:\s*([a-z0-9-]+))");
      std::smatch match;
      const std::string rest = line.substr(comment);
      if (std::regex_search(rest, match, kNeeds)) {
        command.mark = match[1];
      } else {
        command.mark = "?";  // a comment that is no mark
      }
    }
    commands.push_back(command);
  }
  return commands;
}

std::vector<std::string> guide_words(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string_view word : split_words(text)) {
    out.emplace_back(word);
  }
  return out;
}

// The subcommand words of `gb10tune WORDS…` (probe; bench server; rpc start).
std::vector<std::string> guide_subcommand(const std::vector<std::string>& argv) {
  static const std::regex kWord("[a-z]+");
  std::vector<std::string> sub;
  for (std::size_t i = 1; i < argv.size() && std::regex_match(argv[i], kWord); ++i) {
    sub.push_back(argv[i]);
  }
  return sub;
}

// Whether `help` names `option` (followed by a character that cannot continue its name).
bool guide_help_lists(const std::string& help, const std::string& option) {
  for (auto at = help.find(option); at != std::string::npos; at = help.find(option, at + 1)) {
    const std::size_t end = at + option.size();
    if (end == help.size() || !(std::isalnum(static_cast<unsigned char>(help[end])) ||
                                help[end] == '-' || help[end] == '_')) {
      return true;
    }
  }
  return false;
}

// The user's machine, as the header comment describes it.
class GuideWorld {
 public:
  GuideWorld() {
    fs::copy(sysroot_fixture("gb10"), m_sysroot.path(), fs::copy_options::recursive);
    fs::create_directories(home() / "models");
    tiny_qwen35_model().write(home() / "models" / "Qwen3.8-27B-Q4_K_M.gguf");
    const fs::path bin = home() / "llama.cpp" / "build" / "bin";
    fs::create_directories(bin);
    fs::copy_file(stand_in_server_path(), bin / "llama-server");
    // env(1) takes its -u options before the first NAME=VALUE.
    m_env = {"-u",
             "XDG_STATE_HOME",
             "-u",
             "XDG_CONFIG_HOME",
             "-u",
             "XDG_CACHE_HOME",
             "-u",
             "GGML_CUDA_ENABLE_UNIFIED_MEMORY",
             "HOME=" + home().string(),
             "STANDIN_LOAD_MS=100",
             "STANDIN_SYSTEM_INFO=system_info: n_threads = 2 | CPU : AVX2 = 1 | FMA = 1 | "
             "F16C = 1 | AVX512 = 1 | DOTPROD = 1 | MATMUL_INT8 = 1 | SVE = 1 |",
             "STANDIN_SPEED=--spec-draft-n-max=5:1.10,--spec-draft-n-max=6:1.16,"
             "--spec-draft-n-max=7:1.05,--spec-draft-n-max=3:0.9,-ub=256:1.02"};
  }
  ~GuideWorld() { run({"gb10tune", "stop"}); }

  fs::path home() const { return m_home.path(); }
  int port() const { return m_port; }

  // `~/…` expanded and port 8080 replaced, as the header comment says.
  std::vector<std::string> substitute(const std::vector<std::string>& argv) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
      std::string word = argv[i];
      if (starts_with(word, "~/")) {
        word = (home() / word.substr(2)).string();
      }
      if (word == "8080" && i > 0 && argv[i - 1] == "--port") {
        word = std::to_string(m_port);
      }
      out.push_back(word);
    }
    return out;
  }

  // Runs `gb10tune ARGS…` (argv[0] is "gb10tune"); the planning commands see the captured GB10.
  // With `redirect`, stdout goes to that file (through sh, as `> FILE` in a shell).
  CliResult run(std::vector<std::string> argv, const std::string& redirect = {}) const {
    static const std::set<std::string> kPlanning = {"probe", "plan", "launch", "tune"};
    argv.erase(argv.begin());
    if (!argv.empty() && kPlanning.count(argv.front()) > 0) {
      argv.insert(argv.begin(), {"--sysroot", m_sysroot.path().string()});
    }
    if (redirect.empty()) {
      return run_binary(argv, m_env);
    }
    std::vector<std::string> full = {"env"};
    full.insert(full.end(), m_env.begin(), m_env.end());
    full.insert(full.end(),
                {"GUIDE_OUT=" + redirect, "sh", "-c", R"(exec "$0" "$@" > "$GUIDE_OUT")"});
    const auto tool = tool_argv();
    full.insert(full.end(), tool.begin(), tool.end());
    full.insert(full.end(), argv.begin(), argv.end());
    CliResult result;
    const auto ran = platform::run_capture(full, std::chrono::seconds(60), 4 * 1024 * 1024);
    if (!ran) {
      ADD_FAILURE() << ran.error().message;
      return result;
    }
    result.exit_code = ran->exit_status;
    result.out = ran->output;
    return result;
  }

 private:
  TempDir m_home;
  TempDir m_sysroot;
  int m_port = free_tcp_port();
  std::vector<std::string> m_env;
};

std::string guide_text() {
  return read_text(fs::path(GB10TUNE_SOURCE_DIR) / "docs/gb10-guide.md");
}

TEST(CliGuide, TheBuildLineIsTheOneProbePrintsOnAGb10) {
  const std::vector<GuideCommand> commands = guide_commands(guide_text());
  std::string configure;
  std::string build;
  for (const GuideCommand& c : commands) {
    if (starts_with(c.text, "cmake -B build ")) {
      configure = c.text;
    } else if (starts_with(c.text, "cmake --build build ")) {
      build = c.text;
    }
  }
  ASSERT_FALSE(configure.empty()) << "no `cmake -B build` line in the guide";
  ASSERT_FALSE(build.empty()) << "no `cmake --build build` line in the guide";
  // The golden output of `gb10tune probe` on the captured GB10 (CliProbe checks the tool
  // against it): its build line is the two commands joined by &&.
  const std::string golden =
      read_text(fs::path(GB10TUNE_SOURCE_DIR) / "tests/cli/golden/probe-gb10.txt");
  EXPECT_TRUE(contains(golden, "$ " + configure + " && " + build + "\n"))
      << "the guide's build line differs from probe's:\n"
      << configure << "\n"
      << build;
}

TEST(CliGuide, EveryMarkIsExplainedAndEveryMarkedCommandIsReal) {
  const std::string guide = guide_text();
  const std::vector<GuideCommand> commands = guide_commands(guide);
  ASSERT_FALSE(commands.empty());
  for (const std::string& mark : kGuideMarks) {
    EXPECT_TRUE(contains(guide, "`# needs: " + mark + "`")) << "the guide's table lacks " << mark;
  }
  const GuideWorld world;
  for (const GuideCommand& c : commands) {
    if (c.mark.empty()) {
      continue;
    }
    EXPECT_EQ(kGuideMarks.count(c.mark), 1U)
        << "a comment that is not one of the guide's marks (# needs: "
        << fmt::format("{}", fmt::join(kGuideMarks, "|")) << "): " << c.line;
    const std::vector<std::string> argv = guide_words(c.text);
    if (argv.empty() || argv.front() != "gb10tune") {
      continue;
    }
    // A command that cannot run here still has to be one gb10tune takes: its subcommand
    // exists and lists every option the guide gives it.
    std::vector<std::string> help = {"gb10tune"};
    const std::vector<std::string> sub = guide_subcommand(argv);
    help.insert(help.end(), sub.begin(), sub.end());
    help.push_back("--help");
    const CliResult listed = world.run(help);
    ASSERT_EQ(listed.exit_code, 0) << c.line << "\n" << listed.out;
    for (const std::string& word : argv) {
      if (starts_with(word, "--")) {
        const std::string option = word.substr(0, word.find('='));
        EXPECT_TRUE(guide_help_lists(listed.out, option))
            << option << " is not an option of gb10tune " << fmt::format("{}", fmt::join(sub, " "))
            << ": " << c.line;
      }
    }
  }
}

TEST(CliGuide, TheWalkRunsAsWrittenAgainstTheStandIn) {
  const std::vector<GuideCommand> commands = guide_commands(guide_text());
  const GuideWorld world;
  std::set<std::string> ran;
  for (const GuideCommand& c : commands) {
    if (!c.mark.empty()) {
      continue;  // checked by EveryMarkIsExplainedAndEveryMarkedCommandIsReal
    }
    std::vector<std::string> argv = world.substitute(guide_words(c.text));
    ASSERT_FALSE(argv.empty());
    for (const std::string& word : argv) {
      ASSERT_EQ(word.find_first_of("|;&$`'\"<*"), std::string::npos)
          << "the test runs commands without a shell (only `> FILE`): " << c.line;
    }
    std::string redirect;
    if (argv.size() >= 2 && argv[argv.size() - 2] == ">") {
      redirect = argv.back();
      argv.resize(argv.size() - 2);
    }
    if (argv.size() == 3 && argv[0] == "mkdir" && argv[1] == "-p") {
      fs::create_directories(argv[2]);
      continue;
    }
    ASSERT_EQ(argv.front(), "gb10tune")
        << "this command cannot run here and is not marked `# needs: WHAT`: " << c.line;
    const CliResult result = world.run(argv, redirect);
    ASSERT_EQ(result.exit_code, 0) << "the guide's command failed: " << c.line << "\n"
                                   << result.out;
    const std::vector<std::string> sub = guide_subcommand(argv);
    if (!sub.empty()) {
      ran.insert(sub.front());
    }
  }
  // The walk itself is never marked away.
  for (const char* step : {"probe", "plan", "launch", "verify", "bench", "tune", "watch", "stop"}) {
    EXPECT_EQ(ran.count(step), 1U) << "the guide's walk ran no `gb10tune " << step << "`";
  }
  // What the walk leaves behind: the tuned profile it launched, the units it wrote.
  const fs::path home = world.home();
  EXPECT_TRUE(fs::exists(home / ".config/gb10tune/profiles/tuned-qwen3.8-27b-q4_k_m-decode.json"));
  const fs::path units = home / ".config/systemd/user";
  const std::string unit = read_text(units / "llama-server.service");
  EXPECT_TRUE(contains(unit, "ExecStart=")) << unit;
  EXPECT_TRUE(contains(unit, "launch")) << unit;
  EXPECT_TRUE(fs::exists(units / "gb10tune-watch.service"));
  EXPECT_TRUE(fs::exists(units / "gb10tune-verify.timer"));
}

}  // namespace
}  // namespace gb10tune::testing
