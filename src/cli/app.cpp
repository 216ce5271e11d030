#include "app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sstream>

#include "bench_command.hpp"
#include "gb10tune/version.hpp"
#include "launch_command.hpp"
#include "probe_command.hpp"
#include "rpc_command.hpp"
#include "stop_command.hpp"
#include "verify_command.hpp"
#include "watch_command.hpp"

namespace gb10tune::cli {

namespace {

using Setup = Runner (*)(CLI::App&);

// Every subcommand, in the order `--help` lists them.
constexpr Setup kSubcommands[] = {setup_probe, setup_bench, setup_launch, setup_verify,
                                  setup_stop,  setup_watch, setup_rpc};

constexpr std::string_view kDescription =
    "gb10tune: tune llama.cpp's llama-server for the NVIDIA GB10 (DGX Spark) and tell the "
    "truth on any other Linux machine.";

constexpr std::string_view kFooter =
    "Run 'gb10tune COMMAND --help' for the options of one command.\n"
    "Exit codes: 0 ok, 1 a check or the job failed, 2 usage error, 3 memory pre-check "
    "refused,\n4 no usable GPU for a GPU job, 5 the server failed to start, 130 interrupted.";

}  // namespace

int run_cli(int argc, const char* const* argv, Context& ctx) {
  CLI::App app{std::string(kDescription), "gb10tune"};
  app.set_version_flag("--version", fmt::format("{} {}", kToolName, kToolVersion));
  app.footer(std::string(kFooter));
  app.fallthrough(false);

  std::string sysroot;
  app.add_option("--sysroot", sysroot,
                 "Read /proc, /sys and /etc under DIR (a captured machine), for tests and bug "
                 "reports")
      ->envname("GB10TUNE_SYSROOT")
      ->group("");  // hidden

  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (Setup setup : kSubcommands) {
    Runner runner = setup(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out;
    std::ostringstream err;
    const int rc = app.exit(e, out, err);
    *ctx.out << out.str();
    *ctx.err << err.str();
    return rc == 0 ? to_int(ExitCode::ok) : to_int(ExitCode::usage);
  }

  if (!sysroot.empty()) {
    ctx.sysroot = platform::Sysroot(sysroot);
  }
  for (auto& [sub, runner] : commands) {
    if (sub->parsed()) {
      return to_int(runner(ctx));
    }
  }
  *ctx.err << "gb10tune: a command is required\n\n" << app.help();
  return to_int(ExitCode::usage);
}

}  // namespace gb10tune::cli
