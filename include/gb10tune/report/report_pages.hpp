// The pages of `gb10tune report`, each a pure function of the view: one self-contained HTML file
// (inline CSS and SVG, no script, nothing fetched) and a Markdown version for forum posts.
#pragma once

#include <string>

#include "gb10tune/report/report_view.hpp"

namespace gb10tune::report {

// The HTML page: the machine and build line, then bandwidth, memory, verify, saved runs, the
// roofline and tune's sweep, each as a chart with its table, or a box naming the command that
// produces it.
std::string render_report_html(const ReportView& view);

// The same content as Markdown: tables (GitHub's pipe syntax) with text bars in place of charts.
std::string render_report_markdown(const ReportView& view);

}  // namespace gb10tune::report
