#include "gb10tune/verify/system_services.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/platform/tcp_connection.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/server/system_info.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/util/text_file.hpp"
#include "gb10tune/verify/flags_check.hpp"
#include "gb10tune/verify/http_server_probe.hpp"

namespace gb10tune::verify {

namespace {

namespace fs = std::filesystem;

// The log's last 8 MiB hold this run's system_info line and its cache skips in practice;
// reading more would make verify slow on a log appended to for months.
constexpr std::uintmax_t kLogTail = 8u << 20;

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
Status load_launch_state(VerifyServices& services, const SystemServicesInputs& inputs) {
  const auto dir = platform::state_dir(inputs.env);
  if (!dir) {
    return {};  // no state directory: nothing was launched from here
  }
  if (const Status trusted = trust::check_state_dir(*dir); !trusted) {
    return trusted;
  }
  const auto warn = [&](const std::string& text) {
    if (inputs.warn) {
      inputs.warn(text);
    }
  };
  const launch::StatePaths paths = launch::StatePaths::under(*dir);
  std::error_code ec;
  if (fs::exists(paths.record, ec)) {
    if (auto record = launch::read_launch_record(paths.record)) {
      services.record = std::move(record).value();
      services.record_path = paths.record.string();
      return {};
    } else {
      warn("launch record ignored: " + record.error().message);
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
      warn("pid file " + paths.pid_file.string() + " holds no pid; ignored");
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
ServerBinary server_binary(const ProcessSnapshot& snapshot) {
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

// The finding for options that could not be read: a warning, never a pass.
FlagsOutcome flags_unknown(const Expected<server::ServerFlags>& flags, const std::string& fix) {
  FlagsOutcome outcome;
  Finding unread;
  unread.id = "server-flags";
  unread.fact = "K15";
  unread.severity = Severity::warn;
  unread.summary = "the server's options are known";
  unread.evidence = flags ? std::string("its --help lists no options") : flags.error().message;
  unread.fix = fix;
  outcome.findings.push_back(std::move(unread));
  return outcome;
}

// Check 3: the server's options from the --help text given, or from running its binary.
FlagsChecker flags_checker(const platform::Sysroot& root,
                           std::optional<Expected<server::ServerFlags>> given_help) {
  return [&root, given_help = std::move(given_help)](const ProcessSnapshot& snapshot,
                                                     const launch::LaunchRecord* record) {
    Expected<server::ServerFlags> flags = Error{"no --help text"};
    std::string fix = "check that the server binary still runs with --help";
    if (given_help) {
      flags = *given_help;
    } else if (!root.is_live()) {
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
      return flags_unknown(flags, fix);
    }
    return check_flags(root, snapshot, *flags, record);
  };
}

// The build's system_info line: from the file given, or from running the binary with -lv 4.
std::function<Expected<std::string>(const ProcessSnapshot&)> system_info_reader(
    const platform::Sysroot& root, const std::string& given_file) {
  return [&root, given_file](const ProcessSnapshot& snapshot) -> Expected<std::string> {
    if (!given_file.empty()) {
      const auto text = read_text_file(given_file);
      if (const auto line = server::find_system_info_line(text.value_or(""))) {
        return std::string(*line);
      }
      return Error{fmt::format("no system_info line in {}", given_file)};
    }
    if (!root.is_live()) {
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
}

// The workers of a head launched with --rpc: a TCP connect only (the head holds each worker's
// one session), and the process of a worker that `rpc start` started here.
RpcWorkerAccess rpc_worker_access(const SystemServicesInputs& inputs) {
  RpcWorkerAccess access;
  const platform::Sysroot& root = *inputs.root;
  if (root.is_live()) {
    access.connect = [](const rpc::Endpoint& endpoint) -> Status {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      auto connection = platform::TcpConnection::connect(endpoint.host, endpoint.port, deadline);
      if (!connection) {
        return connection.error();
      }
      return {};
    };
  }
  access.local = [&root,
                  env = inputs.env](const rpc::Endpoint& endpoint) -> std::optional<LocalWorker> {
    const auto dir = platform::state_dir(env);
    if (!dir) {
      return std::nullopt;
    }
    const auto paths = rpc::worker_state_paths(*dir, endpoint.port);
    const auto status = launch::check_pid_file(root, paths);
    if (status.state != launch::PidFileState::running ||
        status.server->record.url != "rpc://" + endpoint.to_string()) {
      return std::nullopt;
    }
    LocalWorker worker;
    worker.pid = status.server->pid;
    worker.binary =
        status.server->record.argv.empty() ? std::string() : status.server->record.argv.front();
    if (const auto memory = sys::read_process_memory(root, worker.pid)) {
      worker.rss = memory->vm_rss;
    }
    if (auto log = read_tail(paths.log.string(), root.resolve(paths.log.string()), kLogTail)) {
      worker.log_text = std::move(*log);
    }
    return worker;
  };
  return access;
}

}  // namespace

Expected<VerifyServices> system_services(const SystemServicesInputs& inputs) {
  VerifyServices services;
  services.root = inputs.root;
  if (const Status loaded = load_launch_state(services, inputs); !loaded) {
    return loaded.error();
  }
  std::optional<Expected<server::ServerFlags>> given_help;
  if (!inputs.server_help_file.empty()) {
    const auto text = read_text_file(inputs.server_help_file);
    if (!text) {
      return Error{"cannot read --server-help file " + inputs.server_help_file, ExitCode::usage};
    }
    given_help = server::ServerFlags::parse_help(*text);
  }
  gpu::GpuBackend* gpu = inputs.gpu;
  services.nvml = [gpu] { return gpu->query_nvml(); };
  const platform::Sysroot& root = *inputs.root;
  services.read_log = [&root](const std::string& path) {
    return read_tail(path, root.resolve(path), kLogTail);
  };
  services.check_flags = flags_checker(root, std::move(given_help));
  services.build_system_info = system_info_reader(root, inputs.server_system_info_file);
  // A captured machine's server cannot be reached: only an explicit --url is probed then.
  if (root.is_live() || !inputs.url.empty()) {
    services.connect = [](const std::string& url) { return make_http_probe(url); };
  }
  services.rpc_workers = rpc_worker_access(inputs);
  return services;
}

}  // namespace gb10tune::verify
