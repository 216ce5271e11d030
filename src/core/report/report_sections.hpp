// Private to report/: the report's sections as data (title, charts, tables, notes, or the
// missing part's command), computed once from the view and drawn by both the HTML and the
// Markdown renderer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gb10tune/report/report_view.hpp"
#include "report_svg.hpp"

namespace gb10tune::report {

// A table of text cells; every row has as many cells as the header.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// One section of the page.
struct Section {
  std::string id;  // "bandwidth", "memory", "verify", "runs", "roofline", "tune"
  std::string title;
  std::string meta;  // device, source, build and date of the figures
  std::vector<BarChart> charts;
  std::optional<StackChart> stack;
  std::vector<Table> tables;
  std::vector<std::string> notes;
  std::vector<CheckView> checks;
  std::vector<MissingPart> missing;  // parts of this section the state directory lacks
};

// The sections in page order; a section whose figures are all absent holds only `missing`.
std::vector<Section> report_sections(const ReportView& view);

// "✔", "⚠", "✘" or "·" for a verify severity.
std::string severity_mark(const std::string& severity);

}  // namespace gb10tune::report
