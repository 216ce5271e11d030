#include "gb10tune/watch/watch_metrics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace gb10tune::watch {

namespace {

// A value as the exposition writes it: whole numbers (every byte count) as integers.
std::string exposition_number(double value) {
  return value == std::floor(value) && std::fabs(value) < 9.0e15 ? fmt::format("{:.0f}", value)
                                                                 : fmt::format("{}", value);
}

// "# HELP" and "# TYPE" of a family.
std::string family_header(std::string_view name, std::string_view type, std::string_view help) {
  return fmt::format("# HELP gb10tune_watch_{0} {1}\n# TYPE gb10tune_watch_{0} {2}\n", name, help,
                     type);
}

// One metric family with one unlabelled value.
void add_family(std::string& out, std::string_view name, std::string_view type,
                std::string_view help, double value) {
  out += family_header(name, type, help) +
         fmt::format("gb10tune_watch_{} {}\n", name, exposition_number(value));
}

void add_gauge(std::string& out, std::string_view name, std::string_view help, double value) {
  add_family(out, name, "gauge", help, value);
}

void add_counter(std::string& out, std::string_view name, std::string_view help,
                 std::uint64_t value) {
  add_family(out, name, "counter", help, static_cast<double>(value));
}

double as_double(std::uint64_t bytes) {
  return static_cast<double>(bytes);
}

void add_sample(std::string& out, const Sample& s, const WatchMetrics& m) {
  add_gauge(out, "mem_available_bytes", "MemAvailable of /proc/meminfo.",
            as_double(s.available_bytes));
  add_gauge(out, "headroom_bytes", "MemAvailable minus the stop threshold (--floor).",
            as_double(s.available_bytes) - as_double(m.thresholds.floor_bytes));
  add_gauge(out, "swap_total_bytes", "SwapTotal of /proc/meminfo.", as_double(s.swap_total_bytes));
  add_gauge(out, "swap_used_bytes", "SwapTotal minus SwapFree.", as_double(s.swap_used_bytes));
  add_gauge(out, "server_up", "1 while the watched llama-server runs, else 0.",
            s.server_running ? 1 : 0);
  if (s.server_running && s.server_rss_bytes) {
    add_gauge(out, "server_rss_bytes", "The watched server's VmRSS.",
              as_double(*s.server_rss_bytes));
  }
  if (s.server_running && s.server_gpu_bytes) {
    add_gauge(out, "server_gpu_bytes", "GPU memory NVML accounts to the watched server.",
              as_double(*s.server_gpu_bytes));
  }
}

// A label value escaped as the text format asks: backslash, double quote and newline.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  }
  return out;
}

// A gauge family with one line per GPU whose figure is known, labelled with its NVML index; no
// family at all (not even its # HELP) when no GPU has the figure: unknown is not 0.
template <class Figure>
void add_gpu_gauge(std::string& out, std::string_view name, std::string_view help,
                   const std::vector<gpu::GpuReading>& gpus, Figure figure) {
  std::string lines;
  for (const gpu::GpuReading& gpu : gpus) {
    if (const auto value = figure(gpu)) {
      lines += fmt::format("gb10tune_watch_{}{{gpu=\"{}\"}} {}\n", name, gpu.nvml_index,
                           exposition_number(static_cast<double>(*value)));
    }
  }
  if (!lines.empty()) {
    out += family_header(name, "gauge", help) + lines;
  }
}

// The GPUs NVML reads: an info family naming each, then each sensor in base units.
void add_gpus(std::string& out, const std::vector<gpu::GpuReading>& gpus) {
  if (gpus.empty()) {
    return;
  }
  out += family_header("gpu_info", "gauge", "1 for each GPU NVML lists, its index and name.");
  for (const gpu::GpuReading& gpu : gpus) {
    out += fmt::format("gb10tune_watch_gpu_info{{gpu=\"{}\",name=\"{}\"}} 1\n", gpu.nvml_index,
                       label_value(gpu.name));
  }
  using Reading = gpu::GpuReading;
  add_gpu_gauge(out, "gpu_temperature_celsius", "The GPU's temperature (NVML).", gpus,
                [](const Reading& g) { return g.temperature_celsius; });
  add_gpu_gauge(out, "gpu_power_watts", "The GPU board's power draw (NVML).", gpus,
                [](const Reading& g) { return g.power_watts; });
  add_gpu_gauge(out, "gpu_power_limit_watts", "The power limit the driver enforces (NVML).", gpus,
                [](const Reading& g) { return g.power_limit_watts; });
  add_gpu_gauge(out, "gpu_memory_used_bytes", "The GPU's memory in use (NVML).", gpus,
                [](const Reading& g) { return g.memory_used_bytes; });
  add_gpu_gauge(out, "gpu_memory_total_bytes", "The GPU's own memory (NVML).", gpus,
                [](const Reading& g) { return g.memory_total_bytes; });
}

}  // namespace

void count_event(WatchMetrics& metrics, const Event& event) {
  switch (event.kind) {
    case EventKind::low:
      ++metrics.warnings;
      break;
    case EventKind::stopped:
      ++metrics.stops;
      break;
    case EventKind::exited:
      ++metrics.exits;
      break;
    case EventKind::restarted:
      ++metrics.restarts;
      break;
    case EventKind::restart_failed:
      ++metrics.restart_failures;
      break;
    case EventKind::gave_up:
      metrics.gave_up = true;
      break;
    default:
      break;
  }
}

std::string render_prometheus(const WatchMetrics& m) {
  std::string out;
  if (m.last) {
    add_sample(out, *m.last, m);
    add_gpus(out, m.last->gpus);
  }
  add_gauge(out, "warn_threshold_bytes", "MemAvailable below which the watch warns (--warn).",
            as_double(m.thresholds.warn_bytes));
  add_gauge(out, "floor_threshold_bytes",
            "MemAvailable below which the watch stops the server (--floor).",
            as_double(m.thresholds.floor_bytes));
  if (m.plan_bytes > 0) {
    add_gauge(out, "plan_bytes", "The memory the watched server's launch plan needs.",
              as_double(m.plan_bytes));
  }
  add_counter(out, "samples_total", "Samples taken.", m.samples);
  add_counter(out, "warnings_total", "Times MemAvailable fell below --warn.", m.warnings);
  add_counter(out, "stops_total", "Times the watch stopped the server below --floor.", m.stops);
  add_counter(out, "exits_total", "Times the server ended without the watch stopping it.", m.exits);
  add_counter(out, "restarts_total", "Times the watch started the server again.", m.restarts);
  add_counter(out, "restart_failures_total", "Restarts that failed.", m.restart_failures);
  add_gauge(out, "gave_up", "1 once the watch gave up restarting the server.", m.gave_up ? 1 : 0);
  return out;
}

Expected<HostPort> parse_metrics_address(std::string_view text) {
  const bool port_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const std::string full = port_only               ? "127.0.0.1:" + std::string(text)
                           : text.starts_with(':') ? "127.0.0.1" + std::string(text)
                                                   : std::string(text);
  auto parsed = parse_host_port(full);
  if (!parsed) {
    return Error{fmt::format("--metrics '{}': {}; give PORT (on 127.0.0.1), ADDR:PORT or "
                             "[V6]:PORT, e.g. --metrics 9464 or --metrics 0.0.0.0:9464",
                             text, parsed.error().message),
                 ExitCode::usage};
  }
  return parsed;
}

MetricsBoard::MetricsBoard(Thresholds thresholds, std::uint64_t plan_bytes) {
  m_metrics.thresholds = thresholds;
  m_metrics.plan_bytes = plan_bytes;
}

void MetricsBoard::sample(const Sample& sample) {
  const std::lock_guard lock(m_mutex);
  m_metrics.last = sample;
  ++m_metrics.samples;
}

void MetricsBoard::event(const Event& event) {
  const std::lock_guard lock(m_mutex);
  count_event(m_metrics, event);
}

void MetricsBoard::plan(std::uint64_t plan_bytes) {
  const std::lock_guard lock(m_mutex);
  m_metrics.plan_bytes = plan_bytes;
}

std::string MetricsBoard::exposition() const {
  const std::lock_guard lock(m_mutex);
  return render_prometheus(m_metrics);
}

}  // namespace gb10tune::watch
