#include "gb10tune/launch/start_measurement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/start_check.hpp"
#include "gb10tune/rpc/node_log.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::launch {

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
StartMeasurement measure_nodes(const render::RpcPreview& rpc, int pid,
                               const std::filesystem::path& log) {
  StartMeasurement out;
  out.doc = {{"recorded", false},
             {"why_not_recorded", "a plan across RPC nodes is not calibrated"}};
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
  out.doc["nodes"] = nodes;
  const auto memory = settled_memory(pid);
  out.doc["head_rss_bytes"] = memory ? json(memory->vm_rss) : json(nullptr);
  out.line = buffers ? "memory per node: " + fmt::format("{}", fmt::join(parts, "; "))
                     : "memory per node: the log has no buffer lines (add -- -lv 4 to see what "
                       "each node holds)";
  if (memory) {
    out.line += fmt::format("; head RSS {}", format_bytes(memory->vm_rss));
  }
  return out;
}

}  // namespace

StartMeasurement measure_started_server(const render::LaunchPreview& p, int pid,
                                        gpu::GpuBackend* gpu, const platform::Environment& env,
                                        const std::filesystem::path& log, const std::string& now) {
  if (p.rpc != nullptr) {
    return measure_nodes(*p.rpc, pid, log);
  }
  const plan::MemoryPlan& planned = *p.plan;
  const auto memory = settled_memory(pid);
  if (!memory) {
    return {{{"measured_bytes", nullptr}, {"unknown_because", memory.error().message}},
            "memory not measured: " + memory.error().message};
  }
  const gpu::NvmlReport nvml =
      p.calibration_key.backend == plan::PlanBackend::cuda && gpu != nullptr ? gpu->query_nvml()
                                                                             : gpu::NvmlReport{};
  plan::ProcessReading reading = plan::process_reading(*memory, nvml, pid);
  reading.log = plan::parse_buffer_lines(this_start_log(log));
  const plan::StartCheck check = plan::check_started_server(planned, p.calibration_key.backend,
                                                            reading, p.command->slots, now);
  StartMeasurement out;
  out.doc = plan::start_check_to_json(check, planned, p.calibration_key);
  out.line = plan::describe_start_check(check, planned);
  out.doc["recorded"] = false;
  if (!check.learn) {
    return out;
  }
  const auto dir = trust::private_state_dir(env);
  const auto runs =
      dir ? plan::record_calibration_run(*dir / "calibration.json", p.calibration_key, check.run)
          : Expected<std::size_t>(dir.error());
  out.doc["recorded"] = static_cast<bool>(runs);
  out.doc["runs"] = runs ? *runs : 0;
  if (dir) {
    out.doc["file"] = (*dir / "calibration.json").string();
  }
  out.line += runs ? fmt::format("; recorded as calibration run {} for {} on {}", *runs,
                                 p.calibration_key.architecture,
                                 plan::backend_name(p.calibration_key.backend))
                   : "; not recorded: " + runs.error().message;
  return out;
}

}  // namespace gb10tune::launch
