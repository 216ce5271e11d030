// The manual's core: how an option's value is classified, roff escaping, and the man page and
// completion scripts rendered from a small constructed command tree.
#include <gtest/gtest.h>

#include "gb10tune/manual/command_tree.hpp"
#include "gb10tune/manual/completion.hpp"
#include "gb10tune/manual/man_page.hpp"

namespace gb10tune::manual {
namespace {

bool has_text(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CommandEntry manual_command(std::vector<std::string> path, std::string description,
                            std::string footer = "") {
  CommandEntry command;
  command.path = std::move(path);
  command.description = std::move(description);
  command.footer = std::move(footer);
  return command;
}

// gb10tune with `bench server` (a choice, a model, a path, a number and a flag) and `probe`.
CommandEntry small_manual_tree() {
  CommandEntry server =
      manual_command({"bench", "server"}, "Measure a running llama-server. Then more.", "");
  server.options.push_back(
      classify_value({"--goal"}, true, "TEXT", "What to optimise", {"{decode,throughput}"}));
  server.options.push_back(classify_value({"-m", "--model"}, true, "FILE", "The GGUF model", {}));
  server.options.push_back(classify_value({"--save"}, true, "FILE", "Where to save", {}));
  server.options.push_back(classify_value({"--port"}, true, "INT", "The port", {"[1 - 65535]"}));
  server.options.push_back(classify_value({"--json"}, false, "", "Print JSON", {}));
  CommandEntry bench = manual_command({"bench"}, "Measure bandwidth", "");
  bench.subcommands.push_back(server);
  CommandEntry probe =
      manual_command({"probe"}, ".What is this machine: facts", "Exit codes: 0 ok.");
  CommandEntry root = manual_command({}, "gb10tune: tune llama.cpp", "");
  root.options.push_back(classify_value({"--version"}, false, "", "Print the version", {}));
  root.subcommands = {probe, bench};
  return root;
}

TEST(ManualTree, ClassifiesValuesFromTheOptionTable) {
  const OptionEntry set =
      classify_value({"--print"}, true, "systemd|llama-swap", "", {"{systemd,llama-swap}"});
  EXPECT_EQ(set.kind, ValueKind::choice);
  EXPECT_EQ(set.choices, (std::vector<std::string>{"systemd", "llama-swap"}));
  const OptionEntry text = classify_value({"-fa"}, true, "on|off|auto", "", {});
  EXPECT_EQ(text.kind, ValueKind::choice);
  EXPECT_EQ(text.choices, (std::vector<std::string>{"on", "off", "auto"}));
  EXPECT_EQ(classify_value({"--profile"}, true, "NAME|FILE", "", {}).kind, ValueKind::path);
  EXPECT_EQ(classify_value({"-m", "--model"}, true, "FILE", "", {}).kind, ValueKind::model_file);
  EXPECT_EQ(classify_value({"--models-dir"}, true, "DIR", "", {}).kind, ValueKind::path);
  EXPECT_EQ(classify_value({"--port"}, true, "INT", "", {"[1 - 65535]"}).kind, ValueKind::text);
  const OptionEntry flag = classify_value({"--json"}, false, "BOOLEAN", "", {});
  EXPECT_EQ(flag.kind, ValueKind::none);
  EXPECT_EQ(flag.value_text, "");
}

TEST(ManualTree, NamesAndWalksCommands) {
  const CommandEntry root = small_manual_tree();
  const auto commands = all_commands(root);
  ASSERT_EQ(commands.size(), 4U);
  EXPECT_EQ(command_name(*commands[3], '-'), "gb10tune-bench-server");
  EXPECT_EQ(command_key(*commands[3]), "bench server");
  EXPECT_EQ(man_page_file(*commands[1]), "gb10tune-probe.1");
  EXPECT_EQ(completion_words(*commands[2]), (std::vector<std::string>{"server"}));
}

TEST(ManualRoff, EscapesWhatRoffWouldRead) {
  EXPECT_EQ(roff_escape("--model"), "\\-\\-model");
  EXPECT_EQ(roff_escape("a\\b"), "a\\eb");
  EXPECT_EQ(roff_escape(".TH x"), "\\&.TH x");
  EXPECT_EQ(roff_escape("one\n'two"), "one\n\\&'two");
  EXPECT_EQ(roff_escape("a…b×"), "a\\[u2026]b\\[u00D7]");
}

TEST(ManualRoff, RendersAPagePerCommand) {
  const CommandEntry root = small_manual_tree();
  const CommandEntry& server = root.subcommands[1].subcommands[0];
  const std::string page = render_man_page(root, server, "1.2.3");
  EXPECT_TRUE(page.starts_with(".TH GB10TUNE\\-BENCH\\-SERVER 1 \"\" \"gb10tune 1.2.3\""));
  EXPECT_TRUE(
      has_text(page, ".SH NAME\ngb10tune\\-bench\\-server \\- Measure a running llama\\-server\n"));
  EXPECT_TRUE(has_text(page, "\\fB\\-m\\fR, \\fB\\-\\-model\\fR \\fIFILE\\fR\nThe GGUF model\n"));
  EXPECT_TRUE(has_text(page, "\\fB\\-\\-json\\fR\nPrint JSON\n"));
  EXPECT_TRUE(has_text(page, "\\fBgb10tune\\-probe\\fR(1)"));
  const std::string probe = render_man_page(root, root.subcommands[0], "1.2.3");
  EXPECT_TRUE(has_text(probe, ".SH NOTES\n.PP\nExit codes: 0 ok.\n"));
  EXPECT_TRUE(has_text(probe, ".PP\n\\&.What is this machine"));  // a leading dot stays text
  const std::string top = render_man_page(root, root, "1.2.3");
  EXPECT_TRUE(has_text(top, ".SH COMMANDS\n.TP\n\\fBprobe\\fR\n"));
}

TEST(ManualCompletion, BashKnowsCommandsOptionsAndValues) {
  const std::string script = render_bash_completion(small_manual_tree());
  EXPECT_TRUE(has_text(script, "'|bench') cmdpath=bench ;;"));
  EXPECT_TRUE(has_text(script, "'bench|server') cmdpath='bench server' ;;"));
  EXPECT_TRUE(has_text(script,
                       "'bench server|--goal') mapfile -t COMPREPLY < <(compgen -W "
                       "'decode throughput' -- \"$cur\"); return 0 ;;"));
  EXPECT_TRUE(has_text(script, "'bench server|-m'|'bench server|--model') compopt -o filenames"));
  EXPECT_TRUE(has_text(script, "'!*.gguf'"));
  EXPECT_TRUE(has_text(script, "'bench server|--port') COMPREPLY=(); return 0 ;;"));
  EXPECT_TRUE(
      has_text(script, "'bench server') words='--goal -m --model --save --port --json' ;;"));
  EXPECT_TRUE(has_text(script, "'') words='probe bench --version' ;;"));
  EXPECT_FALSE(has_text(script, "|--json')")) << "a flag takes no value";
}

TEST(ManualCompletion, ZshAndFishKnowTheSame) {
  const std::string zsh = render_zsh_completion(small_manual_tree());
  EXPECT_TRUE(zsh.starts_with("#compdef gb10tune\n"));
  EXPECT_TRUE(has_text(zsh, "'bench server|--goal') compadd -- decode throughput; return ;;"));
  EXPECT_TRUE(has_text(zsh, "'bench server|--save') _files; return ;;"));
  EXPECT_TRUE(has_text(zsh, "_files -g '*.gguf'"));
  EXPECT_TRUE(has_text(zsh, "'server:Measure a running llama-server'"));
  const std::string fish = render_fish_completion(small_manual_tree());
  EXPECT_TRUE(has_text(fish, "case 'bench|server'\n                set cmdpath 'bench server'"));
  EXPECT_TRUE(has_text(fish,
                       "complete -c gb10tune -n '__gb10tune_command_is \\'bench server\\'' "
                       "-l goal -x -a 'decode throughput' -d 'What to optimise'"));
  EXPECT_TRUE(has_text(fish, "-s m -l model -x -a '(__fish_complete_suffix .gguf)'"));
  EXPECT_TRUE(has_text(fish, "-l json -d 'Print JSON'"));
}

TEST(ManualCompletion, MenuTextIsTheFirstSentenceCut) {
  EXPECT_EQ(menu_text("Print the plan. Then start."), "Print the plan");
  EXPECT_EQ(menu_text("word word word word", 12), "word word…");
  EXPECT_EQ(menu_text("Ends here."), "Ends here");
}

}  // namespace
}  // namespace gb10tune::manual
