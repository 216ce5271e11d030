#include "gb10tune/report/report_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/util/strings.hpp"
#include "report_json_fields.hpp"

namespace gb10tune::report {

using nlohmann::json;

namespace {

BandwidthBar bandwidth_bar(const json& c) {
  const json& gbps = field(c, "gbps");
  return {fmt::format("{} {}", text(field(c, "allocator")), text(field(c, "operation"))),
          text(field(c, "status")),
          text(field(c, "reason")),
          number(field(gbps, "median")),
          number(field(gbps, "min")),
          number(field(gbps, "max")),
          number(field(c, "percent_of_peak"))};
}

// The bench run to draw: the full bench's, else probe's quick bench.
std::optional<BandwidthView> bandwidth_view(const ReportBundle& bundle) {
  const json* doc = nullptr;
  BandwidthView view;
  if (bundle.bench) {
    doc = &bundle.bench->doc;
    view.source = "gb10tune bench";
    view.date = "saved " + bundle.bench->saved_at;  // the bench document has no date of its own
  } else if (bundle.probe && field(field(bundle.probe->doc, "bandwidth"), "result").is_object()) {
    doc = &field(field(bundle.probe->doc, "bandwidth"), "result");
    view.source = "gb10tune probe --quick-bench";
    view.date = text(field(bundle.probe->doc, "generated_at"));
  }
  if (doc == nullptr || !field(*doc, "cases").is_array()) {
    return std::nullopt;
  }
  view.device = text(field(field(*doc, "device"), "name"));
  view.peak_gbps = number(field(*doc, "peak_bytes_per_second")) / 1e9;
  view.peak_source = text(field(*doc, "peak_source"));
  view.contended = field(*doc, "contended").is_boolean() && field(*doc, "contended").get<bool>();
  view.verdict = text(field(*doc, "verdict"));
  for (const json& c : field(*doc, "cases")) {
    view.bars.push_back(bandwidth_bar(c));
  }
  return view;
}

// Why the last verify is not of the server the launch record names ("" when it is, or when
// either is missing): another pid, or saved before that launch.
std::string other_server(const ReportBundle& bundle) {
  if (!bundle.verify || !bundle.launch) {
    return "";
  }
  const json& record = bundle.launch->doc;
  const std::string launched_at = text(field(record, "launched_at"));
  const std::string launched = launched_at.empty() ? "" : " (" + launched_at + ")";
  const json& server = field(field(bundle.verify->doc, "servers"), 0);
  const json& pid = field(server, "pid");
  if (pid.is_number() && field(record, "pid").is_number() && pid != field(record, "pid")) {
    return fmt::format(
        "This verify checked pid {}, not pid {} that the last gb10tune launch "
        "started{}: its findings are of another server. Run gb10tune verify for "
        "the launched one.",
        number_text(pid), number_text(field(record, "pid")), launched);
  }
  // Both are ISO 8601 UTC ("2026-12-02T03:47:22Z"): they compare as text.
  const std::string& saved = bundle.verify->saved_at;
  if (!saved.empty() && launched_at.size() == saved.size() && saved < launched_at) {
    return fmt::format(
        "This verify (saved {}) ran before the last gb10tune launch{}: its "
        "findings are of an earlier server. Run gb10tune verify for the launched "
        "one.",
        saved, launched);
  }
  return "";
}

// The measured size of the server verify found, from its plan-vs-measured finding; nothing
// when verify checked another server than the launch's.
void add_measured(MemoryView& view, const ReportBundle& bundle) {
  if (!bundle.verify || !other_server(bundle).empty()) {
    return;
  }
  for (const json& server : field(bundle.verify->doc, "servers")) {
    for (const json& check : field(server, "checks")) {
      if (text(field(check, "id")) != "plan-vs-measured") {
        continue;
      }
      view.measured_evidence = text(field(check, "evidence"));
      const auto at = view.measured_evidence.find("measured ");
      if (at != std::string::npos) {
        view.measured_bytes = parse_mib_figure(view.measured_evidence.substr(at + 9));
      }
      return;
    }
  }
}

std::optional<MemoryView> memory_view(const ReportBundle& bundle) {
  if (!bundle.launch) {
    return std::nullopt;
  }
  const json& record = bundle.launch->doc;
  const json& plan = field(field(record, "plan"), "plan");
  if (!plan.is_object()) {
    return std::nullopt;
  }
  MemoryView view;
  view.model = file_name(text(field(record, "model_path")));
  view.date = text(field(record, "launched_at"));
  view.backend = text(field(field(record, "expected"), "backend"));
  view.segments = memory_segments(plan);
  view.total_bytes = bytes(field(plan, "total_bytes"));
  // The figure at load is the one launch and verify compare a process with: the record's
  // expected load_bytes (every buffer) less what batches touch later (on_demand_bytes).
  const json& expected = field(record, "expected");
  view.with_buffers_bytes = field(expected, "load_bytes").is_number()
                                ? bytes(field(expected, "load_bytes"))
                                : bytes(field(plan, "load_bytes"));
  view.load_bytes = view.with_buffers_bytes -
                    std::min(view.with_buffers_bytes, bytes(field(expected, "on_demand_bytes")));
  if (field(plan, "available_bytes").is_number()) {
    view.budget_bytes = bytes(field(plan, "available_bytes"));
  }
  view.fits = !field(plan, "fits").is_boolean() || field(plan, "fits").get<bool>();
  add_measured(view, bundle);
  return view;
}

std::optional<VerifyView> verify_view(const ReportBundle& bundle) {
  if (!bundle.verify) {
    return std::nullopt;
  }
  VerifyView view;
  view.verdict = text(field(bundle.verify->doc, "verdict"));
  view.no_server = text(field(bundle.verify->doc, "error"));
  view.other_server = other_server(bundle);
  for (const json& server : field(bundle.verify->doc, "servers")) {
    view.server =
        fmt::format("pid {}, {}", number_text(field(server, "pid")), text(field(server, "url")));
    for (const json& c : field(server, "checks")) {
      view.checks.push_back({text(field(c, "severity")), text(field(c, "id")),
                             text(field(c, "fact")), text(field(c, "summary")),
                             text(field(c, "evidence")), text(field(c, "fix"))});
    }
    break;  // the first server: the one launch started
  }
  return view;
}

RunView run_view(const SavedDocument& run) {
  const json& doc = run.doc;
  const json& server = field(doc, "server");
  RunView view;
  view.name = run.name;
  view.date = text(field(doc, "date"));
  view.build = text(field(server, "build_info"));
  view.model = file_name(text(field(server, "model_path")));
  const std::string spec = text(field(server, "spec_type"));
  view.speculative =
      spec.empty() || spec == "none"
          ? "none"
          : fmt::format("{}, n-max {}", spec, number_text(field(server, "spec_draft_n_max")));
  const json& level = field(field(doc, "levels"), 0);
  const json& metrics = field(level, "metrics");
  view.samples = static_cast<int>(number(field(field(metrics, "decode_tps"), "count")));
  view.decode = median_with_interval(field(metrics, "decode_tps"));
  view.prefill = median_with_interval(field(metrics, "prefill_tps"));
  if (field(metrics, "acceptance_rate").is_object()) {
    view.acceptance = median_with_interval(field(metrics, "acceptance_rate"));
  }
  return view;
}

std::optional<RooflineView> roofline_view(const SavedDocument& run) {
  const json& roof = field(run.doc, "roofline");
  if (!field(roof, "available").is_boolean() || !field(roof, "available").get<bool>()) {
    return std::nullopt;
  }
  return RooflineView{run.name,
                      number(field(roof, "ceiling_tps")),
                      number(field(roof, "measured_tps")),
                      number(field(roof, "percent_of_ceiling")),
                      text(field(roof, "bytes_source")),
                      text(field(roof, "bandwidth_source"))};
}

}  // namespace

ReportView make_report_view(const ReportBundle& bundle) {
  ReportView view;
  view.machine = machine_line(bundle);
  view.build = build_line(bundle);
  view.date = newest_date(bundle);
  view.tool_version = tool_version(bundle);
  view.bandwidth = bandwidth_view(bundle);
  view.memory = memory_view(bundle);
  view.verify = verify_view(bundle);
  for (const SavedDocument& run : bundle.runs) {
    view.runs.push_back(run_view(run));
    if (auto roof = roofline_view(run)) {
      view.rooflines.push_back(std::move(*roof));
    }
  }
  view.sweep = sweep_view(bundle);
  view.missing = missing_parts(bundle, view);
  view.problems = bundle.problems;
  return view;
}

}  // namespace gb10tune::report
