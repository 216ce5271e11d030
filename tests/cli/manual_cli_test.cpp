// The generated man pages and completions (build/manual, written by gb10tune_manual at build
// time) against the CLI's own option tables: every command, option and enumerated value is in
// them, bash completes partial commands with them, and every page renders without a warning.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/app.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

const std::filesystem::path kManualDir = GB10TUNE_MANUAL_DIR;

std::string read_manual_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in) << file << " is missing: the build writes it (target gb10tune_manual_files)";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "gb10tune-bench-server" for the CLI11 command `app` (the root is "gb10tune").
std::string manual_page_stem(const CLI::App* app) {
  std::string stem;
  for (; app != nullptr; app = app->get_parent()) {
    stem = app->get_parent() == nullptr ? "gb10tune" + stem : "-" + app->get_name() + stem;
  }
  return stem;
}

// roff writes every '-' as "\-".
std::string roff_dashes(const std::string& text) {
  std::string out;
  for (const char c : text) {
    out += c == '-' ? std::string("\\-") : std::string(1, c);
  }
  return out;
}

// Every visible command of the CLI11 tree, walked here on its own (not by the generator).
void visible_commands(CLI::App* app, std::vector<CLI::App*>& out) {
  out.push_back(app);
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (!sub->get_group().empty()) {
      visible_commands(sub, out);
    }
  }
}

TEST(CliManual, EveryOptionAndValueIsInTheManPagesAndCompletions) {
  const auto line = cli::make_command_line();
  std::vector<CLI::App*> commands;
  visible_commands(&line->app, commands);
  ASSERT_GT(commands.size(), 10U);
  const std::string bash = read_manual_file(kManualDir / "completions/gb10tune.bash");
  const std::string zsh = read_manual_file(kManualDir / "completions/_gb10tune");
  const std::string fish = read_manual_file(kManualDir / "completions/gb10tune.fish");
  for (CLI::App* command : commands) {
    const std::string stem = manual_page_stem(command);
    const std::string page = read_manual_file(kManualDir / "man1" / (stem + ".1"));
    for (CLI::App* sub : command->get_subcommands([](CLI::App*) { return true; })) {
      if (!sub->get_group().empty()) {
        EXPECT_NE(page.find("\\fB" + roff_dashes(sub->get_name()) + "\\fR"), std::string::npos)
            << stem << "'s page does not list its command " << sub->get_name();
      }
    }
    for (CLI::Option* option : command->get_options()) {
      if (option->get_group().empty() || !option->nonpositional()) {
        continue;  // hidden, or the arguments after --
      }
      const std::string name = option->get_name();
      EXPECT_FALSE(option->get_description().empty()) << stem << " " << name << " has no help";
      for (const std::string& lname : option->get_lnames()) {
        const std::string word = "--" + lname;
        EXPECT_NE(page.find("\\fB" + roff_dashes(word) + "\\fR"), std::string::npos)
            << stem << ".1 lacks " << word;
        EXPECT_NE(bash.find(" " + word), std::string::npos) << "bash lacks " << stem << word;
        EXPECT_TRUE(zsh.find("      " + word + ":") != std::string::npos ||
                    zsh.find("      '" + word + ":") != std::string::npos)
            << "zsh lacks " << word;
        EXPECT_NE(fish.find(" -l " + lname + " "), std::string::npos) << "fish lacks " << word;
      }
      // An enumerated value (a CLI11 set, "{a,b}") is offered by every script.
      const std::string type = option->get_type_name();
      const std::size_t set = type.find(":{");
      if (set != std::string::npos) {
        const std::string values = type.substr(set + 2, type.find('}', set) - set - 2);
        std::string spaced = values;
        std::replace(spaced.begin(), spaced.end(), ',', ' ');
        EXPECT_NE(bash.find(shell_quote(spaced)), std::string::npos) << name << ": " << spaced;
        EXPECT_NE(fish.find("-x -a '" + spaced + "'"), std::string::npos) << name;
      }
    }
  }
}

// What _gb10tune offers for the words typed so far (the last one being completed), run by bash
// in `dir`, one candidate per line.
std::string bash_offers(const std::vector<std::string>& typed, const std::filesystem::path& dir) {
  std::string words;
  for (const std::string& word : typed) {
    words += " " + shell_quote(word);
  }
  const std::string script = fmt::format(
      "cd {} && source {} && COMP_WORDS=({}) && COMP_CWORD={} && _gb10tune && "
      "printf '%s\\n' \"${{COMPREPLY[@]}}\" | sort",
      shell_quote(dir.string()), shell_quote((kManualDir / "completions/gb10tune.bash").string()),
      words, typed.size() - 1);
  const auto run =
      platform::run_capture({"bash", "--norc", "-c", script}, std::chrono::seconds(20));
  EXPECT_TRUE(run.has_value() && run->exit_status == 0) << (run ? run->output : "bash not found");
  return run ? run->output : "";
}

TEST(CliManual, BashCompletesPartialCommands) {
  testing::TempDir dir;
  std::ofstream(dir.path() / "model.gguf") << "x";
  std::ofstream(dir.path() / "notes.txt") << "x";
  EXPECT_EQ(bash_offers({"gb10tune", "la"}, dir.path()), "launch\n");
  EXPECT_EQ(bash_offers({"gb10tune", "bench", "se"}, dir.path()), "server\n");
  EXPECT_EQ(bash_offers({"gb10tune", "launch", "--pri"}, dir.path()), "--print\n");
  EXPECT_EQ(bash_offers({"gb10tune", "launch", "--json", "--pri"}, dir.path()), "--print\n")
      << "a flag takes no value: the next word is an option again";
  EXPECT_EQ(bash_offers({"gb10tune", "--vers"}, dir.path()), "--version\n");
  EXPECT_EQ(bash_offers({"gb10tune", "launch", "--print", ""}, dir.path()),
            "llama-swap\npreset\nsystemd\n");
  EXPECT_EQ(bash_offers({"gb10tune", "launch", "--model", ""}, dir.path()), "model.gguf\n");
  EXPECT_EQ(bash_offers({"gb10tune", "launch", "--port", ""}, dir.path()), "\n")
      << "a number: nothing to offer";
  EXPECT_EQ(bash_offers({"gb10tune", "rpc", "st"}, dir.path()), "start\nstatus\nstop\n");
}

TEST(CliManual, EveryManPageRendersWithoutWarnings) {
  std::size_t pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kManualDir / "man1")) {
    ++pages;
    const auto run = platform::run_capture(
        {"groff", "-man", "-Tutf8", "-ww", "-z", entry.path().string()}, std::chrono::seconds(20));
    ASSERT_TRUE(run.has_value()) << "groff (package groff-base, with man-db) is needed: "
                                 << run.error().message;
    EXPECT_EQ(run->exit_status, 0) << entry.path();
    EXPECT_EQ(run->output, "") << entry.path();
  }
  EXPECT_GT(pages, 10U);
}

}  // namespace
}  // namespace gb10tune
