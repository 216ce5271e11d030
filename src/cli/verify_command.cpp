#include "verify_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/platform/tcp_connection.hpp"
#include "gb10tune/report/verify_report.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/server/system_info.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/verify/flags_check.hpp"
#include "gb10tune/verify/http_server_probe.hpp"
#include "gb10tune/verify/verify.hpp"

namespace gb10tune::cli {

namespace {

namespace fs = std::filesystem;

// The log's last 8 MiB hold this run's system_info line and its cache skips in practice;
// reading more would make verify slow on a log appended to for months.
constexpr std::uintmax_t kLogTail = 8u << 20;

struct VerifyCliOptions {
  int pid = 0;
  bool json = false;
  bool strict = false;
  bool smoke = false;
  std::string url;
  std::string server_help;         // hidden: a --help text to use instead of running the binary
  std::string server_system_info;  // hidden: the binary's -lv 4 output, instead of running it
};

// The last `max` bytes of `path` (read at `on_disk`); an Error naming `path`.
Expected<std::string> read_tail(const std::string& path, const fs::path& on_disk,
                                std::uintmax_t max) {
  std::ifstream in(on_disk, std::ios::binary);
  if (!in) {
    return Error{fmt::format("cannot read the server log {}", path)};
  }
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(on_disk, ec);
  if (!ec && size > max) {
    in.seekg(static_cast<std::streamoff>(size - max));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// The launch record and pid file of the state directory, when there are any. An Error when the
// state directory or a file in it may not be believed (trust::check_state_dir).
Status load_launch_state(verify::VerifyServices& services, Context& ctx) {
  const auto dir = platform::state_dir(ctx.env);
  if (!dir) {
    return {};  // no state directory: nothing was launched from here
  }
  if (const Status trusted = trust::check_state_dir(*dir); !trusted) {
    return trusted;
  }
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  std::error_code ec;
  if (fs::exists(paths.record, ec)) {
    if (auto record = launch::read_launch_record(paths.record)) {
      services.record = std::move(record).value();
      services.record_path = paths.record.string();
      return {};
    } else {
      *ctx.err << "warning: launch record ignored: " << record.error().message << "\n";
    }
  }
  const auto text = trust::read_private_file(paths.pid_file);
  if (!text) {
    return text.error();
  }
  if (*text) {
    if (const auto pid = parse_u64(trim(**text)); pid && *pid > 0 && *pid <= 0x7fffffff) {
      services.pid_file_pid = static_cast<int>(*pid);
    } else {
      *ctx.err << "warning: pid file " << paths.pid_file.string() << " holds no pid; ignored\n";
    }
  }
  return {};
}

// The server's binary as verify may run it (--help, -lv 4), for a snapshot whose executable is
// readable.
struct ServerBinary {
  std::string path;     // what to run; "" when refused
  std::string refused;  // "not checked (binary owned by nobody (uid 65534), not by root)"
  std::string fix;      // with `refused`: what would let verify run it
};

// Its executable as the kernel reached it ("/proc/<pid>/exe" once replaced on disk: a binary
// replaced since the start is still reachable there), judged by trust::check_binary.
ServerBinary server_binary(const verify::ProcessSnapshot& snapshot) {
  ServerBinary binary;
  binary.path = snapshot.process.exe->deleted
                    ? fmt::format("/proc/{}/exe", snapshot.process.stat.pid)
                    : snapshot.process.exe->path;
  const auto verdict = trust::check_binary(binary.path);
  if (verdict && !verdict->may_run) {
    binary.refused = fmt::format("not checked ({})", verdict->problem);
    binary.fix = verdict->fix;
    binary.path.clear();
  } else if (verdict) {
    binary.path = verdict->path;
  }
  return binary;  // a binary that cannot be examined: running it says what is wrong
}

ExitCode run(const VerifyCliOptions& options, Context& ctx) {
  verify::VerifyOptions verify_options;
  if (options.pid > 0) {
    verify_options.pid = options.pid;
  }
  verify_options.smoke = options.smoke;
  verify_options.url = options.url;

  verify::VerifyServices services;
  services.root = &ctx.sysroot;
  if (const Status loaded = load_launch_state(services, ctx); !loaded) {
    *ctx.err << "gb10tune verify: " << loaded.error().message << "\n";
    return loaded.error().code;
  }
  services.nvml = [&ctx] { return ctx.gpu->query_nvml(); };
  services.read_log = [&ctx](const std::string& path) {
    return read_tail(path, ctx.sysroot.resolve(path), kLogTail);
  };
  std::optional<Expected<server::ServerFlags>> given_help;
  if (!options.server_help.empty()) {
    std::ifstream in(options.server_help, std::ios::binary);
    if (!in) {
      return report_failure(
          ctx, Error{"cannot read --server-help file " + options.server_help, ExitCode::usage});
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    given_help = server::ServerFlags::parse_help(text);
  }
  services.check_flags = [&ctx, &given_help](const verify::ProcessSnapshot& snapshot,
                                             const launch::LaunchRecord* record) {
    Expected<server::ServerFlags> flags = Error{"no --help text"};
    std::string fix = "check that the server binary still runs with --help";
    if (given_help) {
      flags = *given_help;
    } else if (!ctx.sysroot.is_live()) {
      flags = Error{
          "not checked: the server of a captured machine is not run; pass --server-help "
          "FILE"};
    } else if (!snapshot.process.exe) {
      flags = Error{"not checked: its executable is unreadable (run with sudo)"};
    } else if (const ServerBinary binary = server_binary(snapshot); !binary.refused.empty()) {
      flags = Error{binary.refused};
      fix = binary.fix;
    } else {
      flags = server::read_server_flags(binary.path, std::chrono::seconds(10));
      if (!flags) {
        flags = Error{"not checked: " + flags.error().message};
      }
    }
    if (!flags || flags->empty()) {
      verify::FlagsOutcome outcome;
      verify::Finding unread;
      unread.id = "server-flags";
      unread.fact = "K15";
      unread.severity = verify::Severity::warn;
      unread.summary = "the server's options are known";
      unread.evidence = flags ? std::string("its --help lists no options") : flags.error().message;
      unread.fix = fix;
      outcome.findings.push_back(std::move(unread));
      return outcome;
    }
    return verify::check_flags(ctx.sysroot, snapshot, *flags, record);
  };
  services.build_system_info =
      [&ctx, &options](const verify::ProcessSnapshot& snapshot) -> Expected<std::string> {
    if (!options.server_system_info.empty()) {
      std::ifstream in(options.server_system_info, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      if (const auto line = server::find_system_info_line(text)) {
        return std::string(*line);
      }
      return Error{fmt::format("no system_info line in {}", options.server_system_info)};
    }
    if (!ctx.sysroot.is_live()) {
      return Error{"the server of a captured machine is not run"};
    }
    if (!snapshot.process.exe) {
      return Error{"the server's executable is unreadable"};
    }
    const ServerBinary binary = server_binary(snapshot);
    if (!binary.refused.empty()) {
      return Error{binary.refused};
    }
    return server::read_build_system_info(binary.path, std::chrono::seconds(20));
  };
  // A captured machine's server cannot be reached: only an explicit --url is probed then.
  if (ctx.sysroot.is_live() || !options.url.empty()) {
    services.connect = [](const std::string& url) { return verify::make_http_probe(url); };
  }

  // The workers of a head launched with --rpc: a TCP connect only (the head holds each
  // worker's one session), and the process of a worker that `rpc start` started here.
  if (ctx.sysroot.is_live()) {
    services.rpc_workers.connect = [](const rpc::Endpoint& endpoint) -> Status {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      auto connection = platform::TcpConnection::connect(endpoint.host, endpoint.port, deadline);
      if (!connection) {
        return connection.error();
      }
      return {};
    };
  }
  services.rpc_workers.local =
      [&ctx](const rpc::Endpoint& endpoint) -> std::optional<verify::LocalWorker> {
    const auto dir = platform::state_dir(ctx.env);
    if (!dir) {
      return std::nullopt;
    }
    const auto paths = rpc::worker_state_paths(*dir, endpoint.port);
    const auto status = launch::check_pid_file(ctx.sysroot, paths);
    if (status.state != launch::PidFileState::running ||
        status.server->record.url != "rpc://" + endpoint.to_string()) {
      return std::nullopt;
    }
    verify::LocalWorker worker;
    worker.pid = status.server->pid;
    worker.binary =
        status.server->record.argv.empty() ? std::string() : status.server->record.argv.front();
    if (const auto memory = sys::read_process_memory(ctx.sysroot, worker.pid)) {
      worker.rss = memory->vm_rss;
    }
    if (auto log =
            read_tail(paths.log.string(), ctx.sysroot.resolve(paths.log.string()), kLogTail)) {
      worker.log_text = std::move(*log);
    }
    return worker;
  };

  const verify::VerifyResult result = verify::run_verify(verify_options, services);
  if (options.json) {
    *ctx.out << report::dump_document(report::verify_to_json(result, options.strict));
  } else {
    *ctx.out << report::render_verify_text(result, options.strict, ctx.out_style());
  }
  return report::verify_exit_code(result, options.strict) == 0 ? ExitCode::ok : ExitCode::failed;
}

}  // namespace

Runner setup_verify(CLI::App& app) {
  auto options = std::make_shared<VerifyCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "verify",
      "Check that the running llama-server is on the fast path: its environment (no "
      "GGML_CUDA_ENABLE_UNIFIED_MEMORY), memory, flags from all four sources, HTTP answers and "
      "log.");
  sub->add_option("--pid", options->pid,
                  "Check this process (default: the one gb10tune launch started, else every "
                  "llama-server found in /proc)")
      ->check(CLI::PositiveNumber)
      ->option_text("PID");
  sub->add_flag("--json", options->json, "Print one JSON document instead of the checklist");
  sub->add_flag("--strict", options->strict, "Exit 1 on warnings too");
  sub->add_flag("--smoke", options->smoke,
                "Also run one short chat completion and report its timings");
  sub->add_option("--url", options->url,
                  "The server's base URL (default: the launch record's, else --host/--port)")
      ->option_text("URL");
  sub->add_option("--server-help", options->server_help,
                  "Read the server's options from this --help text instead of running it")
      ->group("");  // hidden: for captured machines and tests
  sub->add_option("--server-system-info", options->server_system_info,
                  "Read the build's system_info line from this file instead of running it")
      ->group("");  // hidden: for captured machines and tests
  sub->footer(exit_code_footer(
      {{ExitCode::ok, "nothing failed"},
       {ExitCode::failed,
        "a check failed or no llama-server is running (--strict: or a check warned)"},
       {ExitCode::usage}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
