#include "app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "bench_command.hpp"
#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/util/spelling.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"
#include "launch_command.hpp"
#include "plan_command.hpp"
#include "probe_command.hpp"
#include "report_command.hpp"
#include "rpc_command.hpp"
#include "stop_command.hpp"
#include "tune_command.hpp"
#include "verify_command.hpp"
#include "version_output.hpp"
#include "watch_command.hpp"

namespace gb10tune::cli {

namespace {

using Setup = Runner (*)(CLI::App&);

// Every subcommand, in the order `--help` lists them.
constexpr Setup kSubcommands[] = {setup_probe, setup_bench,  setup_launch, setup_plan,
                                  setup_tune,  setup_verify, setup_stop,   setup_watch,
                                  setup_rpc,   setup_report};

constexpr std::string_view kDescription =
    "gb10tune: tune llama.cpp's llama-server for the NVIDIA GB10 (DGX Spark) and tell the "
    "truth on any other Linux machine.";

constexpr std::string_view kFooter =
    "Run 'gb10tune COMMAND --help' for the options of one command.";

// The command whose --json output is JSON Lines (one event per line).
constexpr std::string_view kJsonLinesCommand = "watch";

// The subcommand that argv names, as words ("bench server", "rpc start"); "" when none.
std::string command_words(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* current = &app;
  std::string words;
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    for (const CLI::App* sub : current->get_subcommands({})) {
      if (sub->get_name() == argv[i]) {
        words += (words.empty() ? "" : " ") + sub->get_name();
        current = sub;
        break;
      }
    }
  }
  return words;
}

// The deepest command argv names (the app itself when none).
const CLI::App* named_command(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* current = &app;
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    for (const CLI::App* sub : current->get_subcommands({})) {
      if (sub->get_name() == argv[i]) {
        current = sub;
        break;
      }
    }
  }
  return current;
}

// "did you mean" lines for the arguments CLI11 did not expect (its ExtrasError message lists
// them after the colon): an option is matched against `command`'s visible option names, a word
// against its visible subcommands.
std::string suggestions(const CLI::App& command, const std::string& message) {
  const auto colon = message.find(": ");
  if (colon == std::string::npos) {
    return "";
  }
  std::vector<std::string> options;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_group().empty()) {
      continue;  // hidden
    }
    for (const std::string& name : option->get_lnames()) {
      options.push_back("--" + name);
    }
    for (const std::string& name : option->get_snames()) {
      options.push_back("-" + name);
    }
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : command.get_subcommands({})) {
    if (!sub->get_group().empty()) {
      commands.push_back(sub->get_name());
    }
  }
  std::string out;
  const std::string listed = message.substr(colon + 2);
  for (const std::string_view word : split(listed, ' ')) {
    const std::string_view name = word.substr(0, word.find('='));
    const bool dashed = starts_with(name, "-");
    if (name.empty() || (!dashed && commands.empty())) {
      continue;
    }
    if (const auto near = closest_name(name, dashed ? options : commands)) {
      out += fmt::format("gb10tune: {}: did you mean {}?\n", name, *near);
    }
  }
  return out;
}

// Whether argv asks for --json (before any "--", after which arguments are llama-server's).
bool json_asked(int argc, const char* const* argv) {
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    if (std::string_view(argv[i]) == "--json") {
      return true;
    }
  }
  return false;
}

}  // namespace

std::unique_ptr<CommandLine> make_command_line() {
  auto line = std::unique_ptr<CommandLine>(
      new CommandLine{CLI::App{std::string(kDescription), "gb10tune"}, {}, false, false, {}});
  CLI::App& app = line->app;
  app.add_flag("--version", line->version,
               "Print the version, the build (type, CUDA and its architectures) and whether NVML "
               "loads, then exit");
  app.add_flag("--json", line->json, "With --version: print it as one JSON document");
  std::string footer = exit_code_footer({{ExitCode::ok},
                                         {ExitCode::failed},
                                         {ExitCode::usage},
                                         {ExitCode::memory_refused},
                                         {ExitCode::no_gpu},
                                         {ExitCode::server_failed},
                                         {ExitCode::not_started},
                                         {ExitCode::interrupted},
                                         {ExitCode::terminated}});
  app.footer(std::string(kFooter) + "\n" + footer);
  app.fallthrough(false);
  app.add_option("--sysroot", line->sysroot,
                 "Read /proc, /sys and /etc under DIR (a captured machine), for tests and bug "
                 "reports")
      ->envname("GB10TUNE_SYSROOT")
      ->group("");  // hidden
  for (Setup setup : kSubcommands) {
    Runner runner = setup(app);
    line->commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  }
  return line;
}

int run_cli(int argc, const char* const* argv, Context& ctx) {
  const auto line = make_command_line();
  CLI::App& app = line->app;
  ctx.command = command_words(app, argc, argv);
  ctx.json = json_asked(argc, argv) && !ctx.command.empty();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out;
    std::ostringstream err;
    const int rc = app.exit(e, out, err);
    *ctx.out << out.str();
    *ctx.err << err.str();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      *ctx.err << suggestions(*named_command(app, argc, argv), e.what());
    }
    if (rc == 0) {
      return to_int(ExitCode::ok);  // --help
    }
    if (ctx.json) {
      const auto doc = render::failure_document(ctx.command, to_int(ExitCode::usage), e.what());
      *ctx.out << (ctx.command == kJsonLinesCommand ? render::dump_document_line(doc)
                                                    : render::dump_document(doc));
    }
    return to_int(ExitCode::usage);
  }

  if (line->version) {
    return to_int(print_version(ctx, line->json));
  }
  if (line->json && !ctx.command.empty()) {
    return to_int(report_failure(
        ctx,
        Error{fmt::format("--json before the command goes with --version only; put it after the "
                          "command: gb10tune {} --json",
                          ctx.command),
              ExitCode::usage},
        ctx.command == kJsonLinesCommand));
  }
  if (!line->sysroot.empty()) {
    ctx.sysroot = platform::Sysroot(line->sysroot);
  }
  for (auto& [sub, runner] : line->commands) {
    if (sub->parsed()) {
      return to_int(after_interrupt(runner(ctx)));
    }
  }
  *ctx.err << "gb10tune: a command is required\n\n" << app.help();
  return to_int(ExitCode::usage);
}

}  // namespace gb10tune::cli
