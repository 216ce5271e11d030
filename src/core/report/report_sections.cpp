#include "report_sections.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::report {

namespace {

std::string interval_text(const MedianWithInterval& m, int decimals) {
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", m.median, decimals, m.low, decimals, m.high,
                     decimals);
}

std::string confidence_text(double confidence) {
  return confidence > 0 ? fmt::format("{:.1f}%", confidence * 100) : std::string("—");
}

ChartRow interval_row(std::string label, const MedianWithInterval& m, std::string_view unit) {
  return {std::move(label), m.median, m.low, m.high, fmt::format("{:.1f} {}", m.median, unit), ""};
}

std::string joined_meta(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (!part.empty()) {
      out += (out.empty() ? "" : " · ") + part;
    }
  }
  return out;
}

Section bandwidth_section(const BandwidthView& b) {
  Section s{"bandwidth", "Memory bandwidth per allocation path", "", {}, {}, {}, {}, {}, {}};
  s.meta = joined_meta(
      {b.device, b.source, b.date, b.contended ? "contended: a llama-server was running" : ""});
  BarChart chart{"bandwidth",
                 "GB/s per allocation path and operation (median, min–max)",
                 "GB/s",
                 {},
                 b.peak_gbps > 0 ? std::optional(b.peak_gbps) : std::nullopt,
                 fmt::format("nominal peak {:.0f} GB/s", b.peak_gbps)};
  Table table{{"case", "median GB/s", "min–max GB/s", "% of peak", "status"}, {}};
  std::map<std::string, std::vector<std::string>> not_measured;  // "waived: why" → cases
  for (const BandwidthBar& bar : b.bars) {
    if (bar.status != "ok") {
      const std::string why = fmt::format("{}: {}", bar.status, bar.reason);
      not_measured[why].push_back(bar.label);
      table.rows.push_back({bar.label, "—", "—", "—", bar.status});
      continue;
    }
    chart.rows.push_back({bar.label, bar.median_gbps, bar.min_gbps, bar.max_gbps,
                          fmt::format("{:.1f} GB/s", bar.median_gbps), ""});
    table.rows.push_back({bar.label, fmt::format("{:.1f}", bar.median_gbps),
                          fmt::format("{:.1f}–{:.1f}", bar.min_gbps, bar.max_gbps),
                          fmt::format("{:.1f}%", bar.percent_of_peak), bar.status});
  }
  for (const auto& [why, cases] : not_measured) {
    s.notes.push_back(fmt::format("Not measured ({}): {}.", why, fmt::join(cases, ", ")));
  }
  s.charts.push_back(std::move(chart));
  s.tables.push_back(std::move(table));
  s.notes.push_back(fmt::format("Nominal peak: {:.0f} GB/s ({}).", b.peak_gbps, b.peak_source));
  if (!b.verdict.empty()) {
    s.notes.push_back(b.verdict);
  }
  return s;
}

// The plan's parts side by side, to the scale of the largest (the stacked bar is to the scale of
// the budget, where small parts are hard to see).
BarChart memory_parts_chart(const MemoryView& m) {
  const bool gib = m.total_bytes >= (1ULL << 30);
  const double unit = gib ? double(1ULL << 30) : double(1ULL << 20);
  BarChart chart{"memory-parts", "the plan's parts", gib ? "GiB" : "MiB", {}, std::nullopt, ""};
  for (const MemorySegment& segment : m.segments) {
    chart.rows.push_back({segment.label, double(segment.bytes) / unit, std::nullopt, std::nullopt,
                          format_bytes(segment.bytes), ""});
  }
  return chart;
}

Section memory_section(const MemoryView& m) {
  Section s{"memory", "Memory plan", "", {}, {}, {}, {}, {}, {}};
  s.meta = joined_meta(
      {m.model, m.backend.empty() ? "" : "backend " + m.backend, "gb10tune launch", m.date});
  StackChart chart{"memory",     "the launch's memory plan, stacked, against the budget",
                   {},           m.budget_bytes,
                   m.load_bytes, m.measured_bytes};
  Table table{{"part", "bytes", "size", "share of budget"}, {}};
  for (const MemorySegment& segment : m.segments) {
    chart.segments.push_back({segment.label, segment.bytes});
    table.rows.push_back(
        {segment.label, std::to_string(segment.bytes), format_bytes(segment.bytes),
         m.budget_bytes && *m.budget_bytes > 0
             ? fmt::format("{:.2f}%", 100.0 * double(segment.bytes) / double(*m.budget_bytes))
             : "—"});
  }
  table.rows.push_back(
      {"total (plan)", std::to_string(m.total_bytes), format_bytes(m.total_bytes), ""});
  if (m.budget_bytes) {
    const std::uint64_t headroom =
        *m.budget_bytes > m.total_bytes ? *m.budget_bytes - m.total_bytes : 0;
    table.rows.push_back({"headroom", std::to_string(headroom), format_bytes(headroom), ""});
    table.rows.push_back(
        {"budget", std::to_string(*m.budget_bytes), format_bytes(*m.budget_bytes), "100%"});
  }
  table.rows.push_back(
      {"plan at load", std::to_string(m.load_bytes), format_bytes(m.load_bytes), ""});
  if (m.with_buffers_bytes > m.load_bytes) {
    table.rows.push_back({"plan at load, with the buffers batches touch later",
                          std::to_string(m.with_buffers_bytes), format_bytes(m.with_buffers_bytes),
                          ""});
  }
  if (m.measured_bytes) {
    table.rows.push_back({"measured (verify)", std::to_string(*m.measured_bytes),
                          format_bytes(*m.measured_bytes), ""});
    s.notes.push_back("verify: " + m.measured_evidence);
  }
  s.notes.push_back(m.fits ? "The plan fits the budget." : "The plan does NOT fit the budget.");
  s.stack = std::move(chart);
  s.charts.push_back(memory_parts_chart(m));
  s.tables.push_back(std::move(table));
  return s;
}

Section verify_section(const VerifyView& v) {
  Section s{"verify", "Verify checklist", "", {}, {}, {}, {}, {}, {}};
  s.meta = joined_meta({v.server, "verdict " + v.verdict});
  if (!v.no_server.empty()) {
    s.notes.push_back(
        fmt::format("verify found no server: {}. Start one (gb10tune launch), then "
                    "run gb10tune verify again.",
                    v.no_server));
  }
  if (!v.other_server.empty()) {
    s.notes.push_back(v.other_server);
  }
  s.checks = v.checks;
  return s;
}

Section runs_section(const std::vector<RunView>& runs) {
  Section s{"runs", "Saved runs: decode and prefill", "", {}, {}, {}, {}, {}, {}};
  BarChart decode{"decode",     "decode t/s per saved run (median, interval of the median)",
                  "t/s",        {},
                  std::nullopt, ""};
  BarChart prefill{"prefill",    "prefill t/s per saved run (median, interval of the median)",
                   "t/s",        {},
                   std::nullopt, ""};
  Table table{{"run", "date", "build", "model", "speculative", "n", "decode t/s [interval]",
               "prefill t/s [interval]", "conf"},
              {}};
  for (const RunView& run : runs) {
    decode.rows.push_back(interval_row(run.name, run.decode, "t/s"));
    prefill.rows.push_back(interval_row(run.name, run.prefill, "t/s"));
    table.rows.push_back({run.name, run.date, run.build, run.model, run.speculative,
                          std::to_string(run.samples), interval_text(run.decode, 1),
                          interval_text(run.prefill, 1), confidence_text(run.decode.confidence)});
  }
  s.meta = runs.empty() ? "" : joined_meta({"gb10tune bench server", runs.front().build});
  s.charts = {std::move(decode), std::move(prefill)};
  s.tables.push_back(std::move(table));
  return s;
}

Section roofline_section(const std::vector<RooflineView>& rooflines) {
  Section s{"roofline", "Roofline: decode as a share of the bandwidth ceiling (K12)",
            "",         {},
            {},         {},
            {},         {},
            {}};
  BarChart chart{"roofline", "measured decode as % of the ceiling", "%", {}, 100.0, "ceiling"};
  Table table{{"run", "ceiling t/s", "measured t/s", "% of ceiling", "bytes per token from",
               "bandwidth from"},
              {}};
  for (const RooflineView& r : rooflines) {
    chart.rows.push_back(
        {r.run, r.percent, std::nullopt, std::nullopt, fmt::format("{:.1f}%", r.percent), ""});
    table.rows.push_back({r.run, fmt::format("{:.1f}", r.ceiling_tps),
                          fmt::format("{:.1f}", r.measured_tps), fmt::format("{:.1f}%", r.percent),
                          r.bytes_source, r.bandwidth_source});
  }
  s.charts.push_back(std::move(chart));
  s.tables.push_back(std::move(table));
  return s;
}

Section tune_section(const SweepView& t) {
  Section s{"tune", "Tune: " + t.goal + " against " + t.knob, "", {}, {}, {}, {}, {}, {}};
  s.meta = joined_meta({"gb10tune tune", "llama.cpp " + t.build, t.date,
                        fmt::format("{} candidate(s)", t.candidates)});
  BarChart chart{"tune",
                 fmt::format("{} by {} (median, interval of the median)", t.goal, t.knob),
                 t.goal == "prefill" ? "ms" : "t/s",
                 {},
                 std::nullopt,
                 ""};
  Table table{{t.knob, "median [interval]", "conf", "outcome"}, {}};
  for (const SweepPoint& p : t.points) {
    const std::string label =
        fmt::format("{} = {}{}", t.knob, p.value, p.outcome == "incumbent" ? " (incumbent)" : "");
    chart.rows.push_back(interval_row(label, p.figure, chart.unit));
    table.rows.push_back(
        {p.value, interval_text(p.figure, 1), confidence_text(p.figure.confidence), p.outcome});
  }
  s.charts.push_back(std::move(chart));
  s.tables.push_back(std::move(table));
  return s;
}

Section empty_section(std::string id, std::string title) {
  return Section{std::move(id), std::move(title), "", {}, {}, {}, {}, {}, {}};
}

}  // namespace

std::string severity_mark(const std::string& severity) {
  if (severity == "ok") {
    return "✔";
  }
  if (severity == "warn") {
    return "⚠";
  }
  if (severity == "not-applicable") {
    return "–";
  }
  return severity == "fail" ? "✘" : "·";
}

std::vector<Section> report_sections(const ReportView& view) {
  std::vector<Section> sections;
  sections.push_back(view.bandwidth ? bandwidth_section(*view.bandwidth)
                                    : empty_section("bandwidth", "Memory bandwidth"));
  sections.push_back(view.memory ? memory_section(*view.memory)
                                 : empty_section("memory", "Memory plan"));
  sections.push_back(view.verify ? verify_section(*view.verify)
                                 : empty_section("verify", "Verify checklist"));
  sections.push_back(view.runs.empty() ? empty_section("runs", "Saved runs")
                                       : runs_section(view.runs));
  sections.push_back(view.rooflines.empty() ? empty_section("roofline", "Roofline (K12)")
                                            : roofline_section(view.rooflines));
  sections.push_back(view.sweep ? tune_section(*view.sweep) : empty_section("tune", "Tune"));
  for (Section& section : sections) {
    for (const MissingPart& missing : view.missing) {
      if (missing.section == section.id) {
        section.missing.push_back(missing);
      }
    }
  }
  return sections;
}

}  // namespace gb10tune::report
