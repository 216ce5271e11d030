#include "gb10tune/render/bench_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gb10tune/render/gpu_json.hpp"
#include "gb10tune/render/text_bar.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

using kernels::CaseStatus;
using nlohmann::json;

namespace {

constexpr int kBarWidth = 24;

std::string case_label(const bench::CaseOutcome& outcome) {
  return fmt::format("{} {}", kernels::to_string(outcome.planned.spec.allocator),
                     kernels::to_string(outcome.planned.spec.operation));
}

std::string bar(double value, double max) {
  return text_bar(value, max, kBarWidth);
}

json stats_json(const bench::SampleStats& stats) {
  return {{"count", stats.count}, {"median", stats.median}, {"min", stats.min}, {"max", stats.max},
          {"mean", stats.mean},   {"stddev", stats.stddev}, {"cv", stats.cv}};
}

json case_json(const bench::CaseOutcome& outcome) {
  const kernels::CaseResult& r = outcome.result;
  std::vector<double> gbps;
  for (double seconds : r.sample_seconds) {
    gbps.push_back(seconds > 0 ? static_cast<double>(r.traffic_bytes_per_sample) / seconds / 1e9
                               : 0.0);
  }
  return {{"allocator", kernels::to_string(outcome.planned.spec.allocator)},
          {"operation", kernels::to_string(outcome.planned.spec.operation)},
          {"status", kernels::to_string(r.status)},
          {"reason", r.reason},
          {"buffer_bytes", outcome.planned.spec.bytes},
          {"buffers", bench::buffers_of(outcome.planned.spec.operation)},
          {"host_bytes", outcome.planned.host_bytes},
          {"warmup", outcome.planned.spec.steady_warmup ? "until steady" : "fixed"},
          {"warmup_min_runs", outcome.planned.spec.warmup_runs},
          {"warmup_runs", r.warmup_seconds.size()},
          {"warmup_seconds", r.warmup_seconds},
          {"launches_per_sample", outcome.planned.spec.launches_per_sample},
          {"traffic_bytes_per_sample", r.traffic_bytes_per_sample},
          {"sample_seconds", r.sample_seconds},
          {"sample_gbps", gbps},
          {"seconds", stats_json(outcome.seconds)},
          {"gbps", stats_json(outcome.gbps)},
          {"percent_of_peak", outcome.percent_of_peak},
          {"percent_of_device_read", outcome.percent_of_device_read},
          {"validated", r.validated},
          {"validation", r.validation},
          {"kernel", r.kernel},
          {"grid_blocks", r.grid_blocks},
          {"block_threads", r.block_threads},
          {"flags", outcome.flags},
          {"wall_seconds", outcome.wall_seconds}};
}

}  // namespace

json bandwidth_to_json(const bench::BandwidthRun& run) {
  json doc = make_document("bench");
  doc["device"] = gpu_device_to_json(run.device);
  doc["peak_bytes_per_second"] = run.peak_bytes_per_second;
  doc["peak_source"] = run.peak_source;
  doc["byte_convention"] =
      "GB/s = 10^9 bytes of traffic per second; read+write traffic counted once each";
  doc["buffer_bytes"] = run.plan.buffer_bytes;
  doc["host_budget_bytes"] = run.plan.host_budget_bytes;
  doc["notes"] = run.plan.notes;
  doc["contended"] = !run.server_pids.empty();
  doc["server_pids"] = run.server_pids;
  json cases = json::array();
  for (const bench::CaseOutcome& outcome : run.cases) {
    cases.push_back(case_json(outcome));
  }
  doc["cases"] = cases;
  doc["scaling"] = {{"ran", run.scaling.ran},
                    {"half_bytes", run.scaling.half_bytes},
                    {"half_seconds", run.scaling.half_seconds},
                    {"full_seconds", run.scaling.full_seconds},
                    {"ratio", run.scaling.ratio},
                    {"ok", run.scaling.ok},
                    {"detail", run.scaling.detail}};
  json sweep = json::array();
  for (const bench::SweepPoint& point : run.sweep) {
    sweep.push_back(
        {{"bytes", point.bytes}, {"gbps", point.gbps}, {"ok", point.ok}, {"error", point.error}});
  }
  doc["sweep"] = sweep;
  doc["verdict"] = run.verdict;
  doc["interrupted"] = run.interrupted;
  doc["all_valid"] = run.all_valid;
  doc["wall_seconds"] = run.wall_seconds;
  return doc;
}

std::string render_bandwidth_text(const bench::BandwidthRun& run, const TextStyle& style) {
  const gpu::GpuDevice& d = run.device;
  std::string out = fmt::format("{} — {} ({})\n", style.bold("gb10tune bench"), d.name,
                                gpu::describe(gpu::classify(d)));
  out += run.peak_bytes_per_second > 0
             ? fmt::format("nominal peak {:.0f} GB/s ({})", run.peak_bytes_per_second / 1e9,
                           run.peak_source)
             : std::string("nominal peak unknown (pass --peak GB/s)");
  out += fmt::format("; buffers of {}; GB/s = 10^9 bytes of read+write traffic per second\n",
                     format_bytes(run.plan.buffer_bytes));
  if (!run.server_pids.empty()) {
    out +=
        style.yellow(fmt::format("contended: llama-server is running (pid {}); figures are "
                                 "under its load\n",
                                 run.server_pids.front()));
  }
  for (const std::string& note : run.plan.notes) {
    out += style.yellow("note: ") + note + "\n";
  }
  out += '\n';

  double max_gbps = 0;
  for (const bench::CaseOutcome& outcome : run.cases) {
    max_gbps = std::max(max_gbps, outcome.gbps.median);
  }
  out += fmt::format("  {:<26}{:<{}}  {:>8}  {:>15}  {:>5}  {:>6}  {:>8}\n", "case", "", kBarWidth,
                     "GB/s", "min–max", "CV", "% peak", "% dev rd");
  for (const bench::CaseOutcome& outcome : run.cases) {
    const std::string label =
        case_label(outcome) +
        (outcome.planned.spec.operation == kernels::Operation::memcpy_d2d ? " (ref)" : "");
    const kernels::CaseResult& r = outcome.result;
    if (r.status == CaseStatus::ok) {
      out +=
          fmt::format("  {:<26}{}  {:>8.1f}  {:>15}  {:>5}  {:>6}  {:>8}\n", label,
                      style.green(bar(outcome.gbps.median, max_gbps)), outcome.gbps.median,
                      fmt::format("{:.0f}–{:.0f}", outcome.gbps.min, outcome.gbps.max),
                      fmt::format("{:.1f}%", 100.0 * outcome.seconds.cv),
                      outcome.percent_of_peak > 0 ? fmt::format("{:.1f}%", outcome.percent_of_peak)
                                                  : std::string("-"),
                      outcome.percent_of_device_read > 0
                          ? fmt::format("{:.1f}%", outcome.percent_of_device_read)
                          : std::string("-"));
      for (const std::string& flag : outcome.flags) {
        out += "      " + style.yellow("⚠ " + flag) + "\n";
      }
    } else {
      const std::string word = std::string(kernels::to_string(r.status));
      const std::string text = word + ": " + r.reason;
      out += fmt::format("  {:<26}{}\n", label,
                         r.status == CaseStatus::failed ? style.red(text) : style.dim(text));
    }
  }
  out += '\n';
  if (run.scaling.ran) {
    out += fmt::format("scaling: {} — {}\n", run.scaling.detail,
                       run.scaling.ok ? style.green("ok") : style.red("FAILED"));
  }
  if (!run.sweep.empty()) {
    out += fmt::format("sweep (cudaMalloc read; L2 is {}):\n", format_bytes(d.l2_bytes));
    double sweep_max = 0;
    for (const bench::SweepPoint& point : run.sweep) {
      sweep_max = std::max(sweep_max, point.gbps);
    }
    for (const bench::SweepPoint& point : run.sweep) {
      out += point.ok ? fmt::format("  {:>10}  {}  {:>8.1f}\n", format_bytes(point.bytes),
                                    bar(point.gbps, sweep_max), point.gbps)
                      : fmt::format("  {:>10}  {}\n", format_bytes(point.bytes), point.error);
    }
  }
  if (run.interrupted) {
    out += style.red("interrupted: the figures above are partial") + "\n";
  }
  out += fmt::format("verdict: {}\n", style.bold(run.verdict));

  return out;
}

std::string render_progress_line(int index, int total, const bench::CaseOutcome& outcome) {
  const kernels::CaseResult& r = outcome.result;
  const std::string figure = r.status == CaseStatus::ok
                                 ? fmt::format("{:.1f} GB/s", outcome.gbps.median)
                                 : fmt::format("{} ({})", kernels::to_string(r.status), r.reason);
  return fmt::format("[{:>2}/{}] {}: {}", index, total, case_label(outcome), figure);
}

std::string render_bandwidth_summary(const bench::BandwidthRun& run) {
  for (const bench::CaseOutcome& outcome : run.cases) {
    if (outcome.planned.spec.allocator == kernels::Allocator::device &&
        outcome.planned.spec.operation == kernels::Operation::read &&
        outcome.result.status == CaseStatus::ok) {
      return fmt::format("cudaMalloc read {:.1f} GB/s ({:.0f}% of nominal); {}",
                         outcome.gbps.median, outcome.percent_of_peak, run.verdict);
    }
  }
  return run.verdict;
}

}  // namespace gb10tune::render
