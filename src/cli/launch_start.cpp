#include "launch_start.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "failure.hpp"
#include "gb10tune/plan/start_check.hpp"
#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/rpc/node_log.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/line_printer.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::cli {

namespace {

using nlohmann::json;

// The settle wait: readings this far apart, until two agree within kSettleSlack, at most
// kSettleMax in all.
constexpr std::chrono::milliseconds kSettleStep{100};
constexpr std::chrono::milliseconds kSettleMax{3000};
constexpr std::uint64_t kSettleSlack = 1ull << 20;
// The log's tail read for the buffer lines of this start.
constexpr std::uintmax_t kLogTail = 4u << 20;

// The server's memory once it stops changing; an error when /proc/<pid> cannot be read.
sys::ProcResult<sys::ProcessMemory> settled_memory(int pid) {
  const platform::Sysroot live;
  auto last = sys::read_process_memory(live, pid);
  const auto until = std::chrono::steady_clock::now() + kSettleMax;
  while (last && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(kSettleStep);
    auto now = sys::read_process_memory(live, pid);
    if (!now) {
      return now;
    }
    const std::uint64_t a = last->vm_rss;
    const std::uint64_t b = now->vm_rss;
    const std::uint64_t change = a > b ? a - b : b - a;
    last = std::move(now);
    if (change <= std::max(kSettleSlack, b / 200)) {
      break;
    }
  }
  return last;
}

// What this start wrote to the log: the text after the last header launch wrote.
std::string this_start_log(const std::filesystem::path& log) {
  std::ifstream in(log, std::ios::binary);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(log, ec);
  if (!in || ec) {
    return {};
  }
  if (size > kLogTail) {
    in.seekg(static_cast<std::streamoff>(size - kLogTail));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto header = text.rfind(fmt::format("==== {} ", kToolName));
  return header == std::string::npos ? text : text.substr(header);
}

// Over RPC: each node's plan against the buffers the head's log names for it (-lv 4), and the
// head's RSS against its own part. Nothing is recorded as a calibration: the model is split
// over machines, and the one-machine calibration would learn the wrong lesson.
json measure_nodes(const report::RpcPreview& rpc, int pid, const std::filesystem::path& log,
                   std::string& line) {
  json doc{{"recorded", false}, {"why_not_recorded", "a plan across RPC nodes is not calibrated"}};
  const auto buffers = rpc::node_buffers_from_log(this_start_log(log), rpc.nodes);
  json nodes = json::array();
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < rpc.nodes.nodes.size(); ++i) {
    const rpc::NodePart& node = rpc.nodes.nodes[i];
    json entry{{"node", node.node},
               {"planned_load_bytes", node.load_bytes},
               {"planned_buffer_bytes", node.buffer_bytes}};
    if (buffers) {
      const std::uint64_t logged = (*buffers)[i].total();
      entry["log_buffers_bytes"] = logged;
      entry["error_percent"] = plan::error_percent(node.buffer_bytes, logged);
      parts.push_back(fmt::format("{} buffers planned {} / logged {} ({:+.1f}%)", node.node,
                                  format_bytes(node.buffer_bytes), format_bytes(logged),
                                  plan::error_percent(node.buffer_bytes, logged)));
    } else {
      entry["log_buffers_bytes"] = nullptr;
    }
    nodes.push_back(entry);
  }
  doc["nodes"] = nodes;
  const auto memory = settled_memory(pid);
  doc["head_rss_bytes"] = memory ? json(memory->vm_rss) : json(nullptr);
  line = buffers ? "memory per node: " + fmt::format("{}", fmt::join(parts, "; "))
                 : "memory per node: the log has no buffer lines (add -- -lv 4 to see what each "
                   "node holds)";
  if (memory) {
    line += fmt::format("; head RSS {}", format_bytes(memory->vm_rss));
  }
  return doc;
}

// Measures the ready server against the plan (plan::check_started_server decides), records the
// run for the preview's key when it is one to learn from, and returns the result as JSON;
// `line` gets the one-line summary.
json calibrate(const report::LaunchPreview& p, int pid, Context& ctx,
               const std::filesystem::path& log, std::string& line) {
  if (p.rpc != nullptr) {
    return measure_nodes(*p.rpc, pid, log, line);
  }
  const plan::MemoryPlan& planned = *p.plan;
  const auto memory = settled_memory(pid);
  if (!memory) {
    json doc{{"measured_bytes", nullptr}, {"unknown_because", memory.error().message}};
    line = "memory not measured: " + memory.error().message;
    return doc;
  }
  const gpu::NvmlReport nvml = p.calibration_key.backend == plan::PlanBackend::cuda
                                   ? ctx.gpu->query_nvml()
                                   : gpu::NvmlReport{};
  plan::ProcessReading reading = plan::process_reading(*memory, nvml, pid);
  reading.log = plan::parse_buffer_lines(this_start_log(log));
  const plan::StartCheck check =
      plan::check_started_server(planned, p.calibration_key.backend, reading, p.command->slots,
                                 ctx.now_iso8601 ? ctx.now_iso8601() : "");
  json doc = plan::start_check_to_json(check, planned, p.calibration_key);
  line = plan::describe_start_check(check, planned);
  doc["recorded"] = false;
  if (!check.learn) {
    return doc;
  }
  const auto dir = trust::private_state_dir(ctx.env);
  const auto runs =
      dir ? plan::record_calibration_run(*dir / "calibration.json", p.calibration_key, check.run)
          : Expected<std::size_t>(dir.error());
  doc["recorded"] = static_cast<bool>(runs);
  doc["runs"] = runs ? *runs : 0;
  if (dir) {
    doc["file"] = (*dir / "calibration.json").string();
  }
  line += runs ? fmt::format("; recorded as calibration run {} for {} on {}", *runs,
                             p.calibration_key.architecture,
                             plan::backend_name(p.calibration_key.backend))
               : "; not recorded: " + runs.error().message;
  return doc;
}

launch::LaunchRecord make_record(const report::LaunchPreview& p,
                                 const launch::LaunchSettings& settings, const Context& ctx,
                                 const launch::StatePaths& paths, const std::string& url) {
  launch::LaunchRecord r;
  r.server_path = p.server_path;
  r.argv = p.command->argv;
  for (const auto& change : p.environment->changes) {
    if (change.action == launch::ChangeAction::removed) {
      r.env_removed.push_back(change.name);
    }
  }
  r.url = url;
  r.log_path = paths.log.string();
  r.model_path = p.model_files.front();
  r.mmproj_path = p.mmproj_path;
  r.launched_at = ctx.now_iso8601 ? ctx.now_iso8601() : "";
  r.gb10tune_version = std::string(kToolVersion);
  r.slots = p.command->slots;
  r.ctx_per_slot = p.command->ctx_per_slot;
  r.kv_unified = p.command->kv_unified;
  r.mtp = p.command->mtp;
  r.draft_n_max = p.command->draft_n_max;
  r.cache_ram_mib = p.command->cache_ram_mib;
  r.architecture = p.model->architecture;
  r.model_has_mtp = p.model->has_mtp();
  r.model_layers = p.model->main_layer_count;
  r.bytes_per_token = p.model->bytes_read_per_token;
  r.expected_weights_bytes = p.plan->weights_bytes + p.plan->projector_bytes;
  r.expected_kv_bytes = p.plan->cache_bytes();
  r.expected_total_bytes = p.plan->total_bytes;
  const plan::ExpectedMemory expected = plan::expected_memory(*p.plan, p.config->backend);
  r.expected_load_bytes = expected.full();
  r.expected_on_demand_bytes = expected.on_demand;
  r.expected_cache_ram_bytes = p.plan->cache_ram_bytes;
  r.expected_projector_bytes = p.plan->projector_bytes + p.plan->projector_compute_bytes;
  r.backend = std::string(plan::backend_name(p.config->backend));
  r.plan_estimate = p.plan->estimate;
  if (p.rpc != nullptr && !p.rpc->nodes.nodes.empty()) {
    // The head holds only its own part: verify compares the process with that.
    const rpc::NodePart& head = p.rpc->nodes.nodes.back();
    r.expected_weights_bytes = head.weights_bytes;
    r.expected_kv_bytes = head.cache_bytes;
    r.expected_total_bytes = head.total_bytes;
    r.expected_load_bytes = head.load_bytes;
    r.expected_on_demand_bytes.reset();
  }
  r.plan = report::launch_to_json(p);
  r.rules_chosen = p.rules->ids(launch::RuleAction::chosen);
  r.rules_forced = p.rules->ids(launch::RuleAction::forced);
  (void)settings;
  return r;
}

}  // namespace

Expected<LaunchSession> LaunchSession::begin(Context& ctx) {
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return dir.error();
  }
  auto paths = launch::StatePaths::under(*dir);
  auto lock = launch::LaunchLock::acquire(paths);
  if (!lock) {
    return lock.error();
  }
  const auto status = launch::check_pid_file(ctx.sysroot, paths);
  if (status.state == launch::PidFileState::running) {
    return Error{fmt::format("a llama-server started by gb10tune is already running (pid {}, "
                             "{}); it holds the memory this plan needs: stop it first with "
                             "`gb10tune stop`",
                             status.server->pid, status.server->record.url),
                 ExitCode::failed};
  }
  if (status.state == launch::PidFileState::stale) {
    *ctx.err << "gb10tune launch: removing a stale pid file: " << status.why << "\n";
    launch::clear_launch_state(paths);
  }
  return LaunchSession(ctx, std::move(paths), std::move(*lock));
}

ExitCode LaunchSession::start(const report::LaunchPreview& preview,
                              const launch::LaunchSettings& settings, bool json) {
  Context& ctx = *m_ctx;
  // Loudly: the variable the report found costs 16% of decode speed (K2).
  for (const auto& change : preview.environment->changes) {
    if (change.action == launch::ChangeAction::removed) {
      *ctx.err << fmt::format(
          "gb10tune launch: removed {}={} from the server's environment: {} "
          "({})\n",
          change.name, change.value, change.reason, change.fact);
    }
  }
  // Listening everywhere (in any spelling getaddrinfo() reads as such): ask on the loopback.
  const auto url_text =
      fmt::format("http://{}", format_host_port(reachable_host(settings.text("host")),
                                                static_cast<int>(settings.integer("port"))));
  const auto url = http::parse_url(url_text);
  if (!url) {
    return report_failure(ctx, Error{url.error().message, ExitCode::usage});
  }
  launch::StartRequest request;
  request.argv = preview.command->argv;
  request.env = preview.environment->env;
  request.paths = m_paths;
  request.url = *url;
  request.timeout = std::chrono::seconds(settings.integer("timeout_s"));
  request.record = make_record(preview, settings, ctx, m_paths, url_text);

  platform::InterruptGuard guard;
  // On a terminal one line redrawn as the load goes on; elsewhere a line per stage, so that a
  // log of a long load is a few lines, not one per second.
  LinePrinter printer(*ctx.err, ctx.err_redraws(), ctx.err_columns);
  std::optional<launch::LoadStage> printed_stage;
  const auto progress = [&](const launch::StartProgress& now) {
    if (!printer.smart() && printed_stage == now.load.stage) {
      return;
    }
    printed_stage = now.load.stage;
    printer.status(fmt::format("gb10tune launch: {}… {} s (timeout {} s)", now.load.describe(),
                               now.elapsed.count() / 1000, now.timeout.count() / 1000));
  };
  const auto started = launch::start_server(request, progress, guard.flag());
  printer.finish();
  if (!started) {
    return report_failure(ctx, started.error());
  }
  const auto seconds = static_cast<double>(started->to_ready.count()) / 1000.0;
  std::string memory_line;
  const auto calibration = calibrate(preview, started->pid, ctx, m_paths.log, memory_line);
  if (json) {
    auto doc = report::launch_to_json(preview);
    doc["dry_run"] = false;
    doc["started"] = {{"pid", started->pid},
                      {"url", url_text},
                      {"log", m_paths.log.string()},
                      {"record", m_paths.record.string()},
                      {"ready_after_ms", started->to_ready.count()}};
    doc["calibration"] = calibration;
    *ctx.out << report::dump_document(doc);
  } else {
    *ctx.out << fmt::format(
        "llama-server is ready at {} (pid {}, ready after {:.1f} s)\n"
        "  {}\n"
        "  log:    {}\n"
        "  check:  gb10tune verify\n"
        "  stop:   gb10tune stop\n",
        url_text, started->pid, seconds, memory_line, m_paths.log.string());
  }
  return ExitCode::ok;
}

}  // namespace gb10tune::cli
