// The edges of the command line a new user met: a model given twice, a folder instead of a
// file, typos, the man pages' SYNOPSIS lines, the text of number options and the units of
// plan's read line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/range_peer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

namespace fs = std::filesystem;
using testing::contains;

const fs::path kManualDir = GB10TUNE_MANUAL_DIR;

std::string manual_text(const std::string& file) {
  std::ifstream in(kManualDir / file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The SYNOPSIS section of a page: the lines between .SH SYNOPSIS and the next .SH.
std::string synopsis(const std::string& page) {
  const auto from = page.find(".SH SYNOPSIS\n");
  if (from == std::string::npos) {
    return "";
  }
  const auto begin = from + 13;
  return page.substr(begin, page.find(".SH ", begin) - begin);
}

struct Models {
  testing::TempDir home;
  testing::TempDir dir;
  platform::Environment env;
  Models() {
    env.set("HOME", home.path().string());
    env.set("PATH", "/usr/bin:/bin");
    fs::create_directories(dir.path() / "m1");
    testing::tiny_qwen35_model().write(dir.path() / "m1" / "a.gguf");
    testing::tiny_qwen35_model(false).write(dir.path() / "b.gguf");
  }
  std::string a() const { return (dir.path() / "m1" / "a.gguf").string(); }
  std::string b() const { return (dir.path() / "b.gguf").string(); }
  testing::CliResult run(std::vector<std::string> args) const {
    return testing::run_cli_on("gb10", args, env);
  }
};

// What a new user met: `plan -m A B` planned B without a word.
TEST(CliEdges, PlanRefusesTwoModels) {
  const Models m;
  const auto r = m.run({"plan", "-m", m.a(), m.b(), "--machine", "gb10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gb10tune plan: two models were given (" + m.a() + " with -m, and " + m.b() +
                       "); plan reads one: give it once, as FILE|URL or with -m.\n");
  const auto same = m.run({"plan", "-m", m.a(), "--machine", "gb10"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_TRUE(contains(same.out, "model: " + m.a())) << same.out;
}

// What a new user met: `plan --models-dir m1` said "model is required", though --help lists it.
TEST(CliEdges, PlanFindsTheModelInModelsDir) {
  const Models m;
  const auto r =
      m.run({"plan", "--models-dir", (m.dir.path() / "m1").string(), "--machine", "gb10"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "model: " + m.a())) << r.out;
  const auto none = m.run({"plan", "--machine", "gb10"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err,
                       "give the model: gb10tune plan FILE|URL, -m FILE or "
                       "--models-dir DIR"))
      << none.err;
}

// What a new user met: typos got no suggestion.
TEST(CliEdges, TyposGetASuggestion) {
  const Models m;
  const auto option = m.run({"plan", "--modle", m.a()});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_TRUE(contains(option.err, "--modle: did you mean --model?")) << option.err;
  const auto command = m.run({"lauch"});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_TRUE(contains(command.err, "lauch: did you mean launch?")) << command.err;
  const auto far = m.run({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_FALSE(contains(far.err, "did you mean")) << far.err;
}

// What a new user met: `gb10tune plan [OPTIONS] [-- model...]` and
// `bench compare [OPTIONS] [-- A...] [-- B...]`.
TEST(CliEdges, SynopsisShowsThePositionalsAsTheyAreTyped) {
  EXPECT_EQ(synopsis(manual_text("man1/gb10tune-plan.1")),
            ".B gb10tune plan\n[\\fIOPTIONS\\fR] [\\fIFILE|URL\\fR]\n");
  EXPECT_EQ(synopsis(manual_text("man1/gb10tune-launch.1")),
            ".B gb10tune launch\n[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR \\fIargs\\fR...]\n");
  EXPECT_EQ(synopsis(manual_text("man1/gb10tune-bench-compare.1")),
            ".B gb10tune bench compare\n[\\fIOPTIONS\\fR] \\fIA\\fR \\fIB\\fR\n");
  EXPECT_EQ(synopsis(manual_text("man1/gb10tune-probe.1")),
            ".B gb10tune probe\n[\\fIOPTIONS\\fR]\n");
}

// What a new user met: `--max-restarts INT:INT in [0 - 1000000]` in --help, and
// `--max-restarts abc` answered "Value abc not in range".
TEST(CliEdges, NumberOptionsReadWell) {
  const Models m;
  const auto help = m.run({"watch", "--help"});
  EXPECT_TRUE(contains(help.out, "--max-restarts N")) << help.out;
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"probe"},
                                             {"bench"},
                                             {"bench", "server"},
                                             {"bench", "compare"},
                                             {"launch"},
                                             {"plan"},
                                             {"tune"},
                                             {"verify"},
                                             {"stop"},
                                             {"watch"},
                                             {"rpc", "start"},
                                             {"rpc", "stop"},
                                             {"rpc", "status"},
                                             {"report"}}) {
    std::vector<std::string> args = command;
    args.push_back("--help");
    const auto text = m.run(args);
    EXPECT_FALSE(contains(text.out, "INT:")) << args.front() << "\n" << text.out;
    EXPECT_FALSE(contains(text.out, "FLOAT:")) << args.front() << "\n" << text.out;
  }
  const auto word = m.run({"watch", "--max-restarts", "abc"});
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_TRUE(contains(word.err,
                       "--max-restarts: abc is not a number; give an integer from 0 "
                       "to 1000000"))
      << word.err;
  const auto high = m.run({"watch", "--max-restarts", "2000000"});
  EXPECT_EQ(high.exit_code, 2);
  EXPECT_TRUE(contains(high.err,
                       "--max-restarts: 2000000 is out of range; give an integer "
                       "from 0 to 1000000"))
      << high.err;
}

// What a new user met: `read: 2.0 MiB of the files' 2.3 MB` (binary and decimal units mixed).
TEST(CliEdges, PlansReadLineUsesOneUnit) {
  const Models m;
  auto log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer peer(testing::ranged_files({{"/a.gguf", m.a()}}, log));
  const auto r = m.run({"plan", peer.url() + "/a.gguf", "--machine", "gb10", "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("read: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_TRUE(contains(line, "MiB of the file's ") || contains(line, "KiB of the file's ")) << line;
  EXPECT_FALSE(contains(line, " MB")) << line;
  EXPECT_FALSE(contains(line, " kB")) << line;
}

}  // namespace
}  // namespace gb10tune
