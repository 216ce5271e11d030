#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/render/text_bar.hpp"
#include "gb10tune/report/report_pages.hpp"
#include "gb10tune/util/strings.hpp"
#include "report_sections.hpp"
#include "report_svg.hpp"

namespace gb10tune::report {

namespace {

constexpr int kBarCells = 24;

// A table cell: pipes escaped, line breaks as spaces, never empty.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += (c == '\n' || c == '\r') ? ' ' : c;
    }
  }
  return out.empty() ? " " : out;
}

std::string table_md(const Table& table) {
  std::string out = "|";
  std::string rule = "|";
  for (const std::string& header : table.header) {
    out += " " + cell(header) + " |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const std::string& value : row) {
      out += " " + cell(value) + " |";
    }
    out += "\n";
  }
  return out + "\n";
}

// A chart as text bars in a code block: label, bar, value; the reference line as a note.
std::string chart_md(const BarChart& chart) {
  double max = chart.reference.value_or(0);
  std::size_t label_width = 0;
  for (const ChartRow& row : chart.rows) {
    max = std::max({max, row.value.value_or(0), row.high.value_or(0)});
    label_width = std::max(label_width, row.label.size());
  }
  std::string out = fmt::format("{} (bars to {:.0f} {}):\n\n```text\n", chart.title,
                                nice_axis(max).first, chart.unit);
  for (const ChartRow& row : chart.rows) {
    out += fmt::format("{:<{}}  ", row.label, label_width);
    out += row.value ? render::text_bar(*row.value, nice_axis(max).first, kBarCells) + "  " +
                           row.value_text +
                           (row.low ? fmt::format(" [{:.1f}, {:.1f}]", *row.low, *row.high) : "")
                     : row.note;
    out += "\n";
  }
  if (chart.reference) {
    out += fmt::format("{:<{}}  {}\n", chart.reference_label, label_width,
                       render::text_bar(*chart.reference, nice_axis(max).first, kBarCells));
  }
  return out + "```\n\n";
}

// The plan's segments as text bars against the budget (or the total when no budget is known).
std::string stack_md(const StackChart& chart) {
  std::uint64_t total = 0;
  std::size_t label_width = 8;
  for (const StackSegment& segment : chart.segments) {
    total += segment.bytes;
    label_width = std::max(label_width, segment.label.size());
  }
  const double max = static_cast<double>(std::max(total, chart.budget.value_or(0)));
  std::string out = "Memory plan, each part against the budget:\n\n```text\n";
  for (const StackSegment& segment : chart.segments) {
    out += fmt::format("{:<{}}  {}  {}\n", segment.label, label_width,
                       render::text_bar(static_cast<double>(segment.bytes), max, kBarCells),
                       format_bytes(segment.bytes));
  }
  out += fmt::format("{:<{}}  {}  {}\n", "total", label_width,
                     render::text_bar(static_cast<double>(total), max, kBarCells),
                     format_bytes(total));
  if (chart.measured) {
    out += fmt::format("{:<{}}  {}  {}\n", "measured", label_width,
                       render::text_bar(static_cast<double>(*chart.measured), max, kBarCells),
                       format_bytes(*chart.measured));
  }
  return out + "```\n\n";
}

std::string missing_md(const MissingPart& missing) {
  return fmt::format("> **Not in the state directory:** {}. Run `{}` to add it.\n\n", missing.part,
                     missing.command);
}

std::string checks_md(const std::vector<CheckView>& checks) {
  Table table{{"", "check", "fact", "evidence", "fix"}, {}};
  for (const CheckView& c : checks) {
    table.rows.push_back({severity_mark(c.severity), c.summary, c.fact, c.evidence, c.fix});
  }
  return table_md(table);
}

std::string section_md(const Section& s) {
  std::string out = "## " + s.title + "\n\n";
  if (!s.meta.empty()) {
    out += "_" + s.meta + "_\n\n";
  }
  for (const MissingPart& missing : s.missing) {
    out += missing_md(missing);
  }
  if (s.stack) {
    out += stack_md(*s.stack);
  }
  for (const BarChart& chart : s.charts) {
    out += chart_md(chart);
  }
  for (const std::string& note : s.notes) {
    out += note + "\n\n";
  }
  if (!s.checks.empty()) {
    out += checks_md(s.checks);
  }
  for (const Table& table : s.tables) {
    out += table_md(table);
  }
  return out;
}

}  // namespace

std::string render_report_markdown(const ReportView& view) {
  std::string out = fmt::format(
      "# gb10tune report\n\n**Machine:** {}  \n**Build:** {}  \n**State as of:** {} (gb10tune "
      "{})\n\n",
      view.machine.empty() ? "unknown" : view.machine, view.build.empty() ? "unknown" : view.build,
      view.date, view.tool_version);
  for (const MissingPart& missing : view.missing) {
    if (missing.section == "machine") {
      out += missing_md(missing);
    }
  }
  for (const Section& section : report_sections(view)) {
    out += section_md(section);
  }
  if (!view.problems.empty()) {
    out += "## Parts that could not be read\n\n";
    for (const std::string& problem : view.problems) {
      out += "- " + problem + "\n";
    }
  }
  return out;
}

}  // namespace gb10tune::report
