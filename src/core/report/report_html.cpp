#include <fmt/format.h>

#include "gb10tune/report/report_pages.hpp"
#include "report_sections.hpp"
#include "report_svg.hpp"

namespace gb10tune::report {

namespace {

// The colors of the memory plan's segments, in order (SVG fill and legend swatch).
constexpr const char* kSegmentColors[] = {"#2f6fde", "#e07b24", "#8e44ad", "#16a085", "#c0392b",
                                          "#7f8c8d", "#d4ac0d", "#1abc9c", "#34495e", "#a04000"};

constexpr const char* kStyle = R"(
:root{--fg:#1d2330;--muted:#5b6474;--bg:#fff;--card:#f6f7f9;--line:#d5d9e0}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:960px;margin:0 auto;padding:16px}
h1{font-size:1.5rem;margin:0 0 .25rem}
h2{font-size:1.15rem;margin:.2rem 0 .3rem}
.meta{color:var(--muted);font-size:.9rem;margin:.1rem 0}
.caption{font-weight:600;font-size:.92rem;margin:.8rem 0 0}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:16px 0}
svg.chart{display:block;width:100%;max-width:560px;height:auto;margin:.5rem 0}
svg text{font-size:11px;fill:var(--fg)}
.axis line{stroke:#8a93a3;stroke-width:.6}
.tick{text-anchor:middle;fill:var(--muted)}
.unit{fill:var(--muted)}
.bar{fill:#2f6fde}
.whisker{stroke:#0c1f45;stroke-width:1.2;fill:none}
.reference line{stroke:#c0392b;stroke-dasharray:4 3;stroke-width:1.2}
.reference text{fill:#c0392b;text-anchor:end}
.note{fill:var(--muted);font-style:italic}
.measured{fill:#95a5a6}
.load-marker{stroke:#111;stroke-width:1.5}
.table-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.86rem}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;white-space:nowrap}
th{background:#eceef2}
.missing{border:1px dashed #b58900;background:#fffbea;padding:8px 12px;border-radius:6px;margin:.4rem 0}
ul.checks{list-style:none;padding:0;margin:.3rem 0}
.checks li{padding:5px 0;border-bottom:1px solid var(--line)}
.mark{display:inline-block;width:1.3em;font-weight:bold}
.sev-ok .mark{color:#1e8e3e}.sev-warn .mark{color:#b58900}.sev-fail .mark{color:#c0392b}
.evidence,.fix{display:block;margin-left:1.3em;color:var(--muted);font-size:.84rem;overflow-wrap:anywhere}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.4em;vertical-align:baseline}
code{background:#eceef2;padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.8rem;margin:1rem 0}
@media (max-width:600px){body{font-size:14px}main{padding:8px}section{padding:10px;margin:10px 0}svg text{font-size:13px}}
)";

std::string style() {
  std::string css = kStyle;
  for (std::size_t i = 0; i < std::size(kSegmentColors); ++i) {
    css += fmt::format(".seg-{0}{{fill:{1}}}.swatch.seg-{0}{{background:{1}}}\n", i,
                       kSegmentColors[i]);
  }
  return css;
}

// The table; its first `swatches` rows get the memory plan's colors as a legend.
std::string table_html(const Table& table, std::size_t swatches) {
  std::string out = "<div class=\"table-wrap\"><table><thead><tr>";
  for (const std::string& cell : table.header) {
    out += "<th>" + html_escape(cell) + "</th>";
  }
  out += "</tr></thead><tbody>";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out += "<tr>";
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      const bool swatch = c == 0 && r < swatches && r < std::size(kSegmentColors);
      out += "<td>" +
             (swatch ? fmt::format("<span class=\"swatch seg-{}\"></span>", r) : std::string()) +
             html_escape(table.rows[r][c]) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string checks_html(const std::vector<CheckView>& checks) {
  std::string out = "<ul class=\"checks\">";
  for (const CheckView& c : checks) {
    out += fmt::format(
        "<li class=\"check sev-{}\" data-id=\"{}\"><span class=\"mark\">{}</span>{}{}"
        "<span class=\"evidence\">{}</span>",
        html_escape(c.severity), html_escape(c.id), severity_mark(c.severity),
        html_escape(c.summary), c.fact.empty() ? "" : " [" + html_escape(c.fact) + "]",
        html_escape(c.evidence));
    if (!c.fix.empty()) {
      out += "<span class=\"fix\">fix: " + html_escape(c.fix) + "</span>";
    }
    out += "</li>";
  }
  return out + "</ul>";
}

std::string missing_html(const MissingPart& missing) {
  return fmt::format(
      "<div class=\"missing\" data-part=\"{}\">Not in the state directory: {}. Run "
      "<code>{}</code> to add it.</div>",
      html_escape(missing.section), html_escape(missing.part), html_escape(missing.command));
}

std::string section_html(const Section& s) {
  std::string out = fmt::format("<section id=\"{}\"><h2>{}</h2>", s.id, html_escape(s.title));
  if (!s.meta.empty()) {
    out += "<p class=\"meta\">" + html_escape(s.meta) + "</p>";
  }
  for (const MissingPart& missing : s.missing) {
    out += missing_html(missing);
  }
  if (s.stack) {
    out +=
        "<p class=\"caption\">" + html_escape(s.stack->title) + "</p>" + svg_stack_chart(*s.stack);
  }
  for (const BarChart& chart : s.charts) {
    out += "<p class=\"caption\">" + html_escape(chart.title) + "</p>" + svg_bar_chart(chart);
  }
  for (const std::string& note : s.notes) {
    out += "<p>" + html_escape(note) + "</p>";
  }
  if (!s.checks.empty()) {
    out += checks_html(s.checks);
  }
  for (const Table& table : s.tables) {
    out += table_html(table, s.stack ? s.stack->segments.size() : 0);
  }
  return out + "</section>\n";
}

}  // namespace

std::string render_report_html(const ReportView& view) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>gb10tune report — {}</title><style>{}</style></head>\n<body><main>"
      "<header><h1>gb10tune report</h1><p class=\"meta\" id=\"machine\">{}</p>"
      "<p class=\"meta\" id=\"build\">{}</p><p class=\"meta\" id=\"date\">{}</p></header>\n",
      html_escape(view.machine.empty() ? "unknown machine" : view.machine), style(),
      html_escape(view.machine.empty() ? "machine: unknown" : view.machine),
      html_escape(
          view.build.empty()
              ? "llama.cpp build: not recorded (no llama-server found by probe, no saved run)"
              : view.build),
      html_escape(fmt::format("state as of {} · gb10tune {}", view.date, view.tool_version)));
  for (const MissingPart& missing : view.missing) {
    if (missing.section == "machine") {
      out += missing_html(missing);
    }
  }
  for (const Section& section : report_sections(view)) {
    out += section_html(section);
  }
  if (!view.problems.empty()) {
    out += "<section id=\"problems\"><h2>Parts that could not be read</h2><ul>";
    for (const std::string& problem : view.problems) {
      out += "<li>" + html_escape(problem) + "</li>";
    }
    out += "</ul></section>";
  }
  return out +
         "<footer>Written by gb10tune report from the saved results of each command; "
         "figures as each command measured them.</footer></main></body></html>\n";
}

}  // namespace gb10tune::report
