// Private to report/: the inline SVG charts of the HTML report. Each chart is one <svg> with a
// viewBox (it scales to the page's width), an x axis with ticks (<g class="axis" data-axis="x">),
// a category axis (<g class="axis" data-axis="y">) and one element per data point carrying its
// figures in data-* attributes, so that a test can read them back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune::report {

// One row of a bar chart: a bar at `value`, with an optional low–high whisker; a row without a
// value shows `note` instead ("waived: …").
struct ChartRow {
  std::string label;
  std::optional<double> value;
  std::optional<double> low;
  std::optional<double> high;
  std::string value_text;  // printed at the bar's end ("4453 GB/s [4431, 4489]")
  std::string note;
};

// A horizontal bar chart with an optional reference line (the nominal peak, the ceiling).
struct BarChart {
  std::string id;     // data-chart
  std::string title;  // the accessible name
  std::string unit;   // "GB/s", "t/s", "%"
  std::vector<ChartRow> rows;
  std::optional<double> reference;
  std::string reference_label;
};

// The chart as one <svg> element.
std::string svg_bar_chart(const BarChart& chart);

// One segment of a stacked bar.
struct StackSegment {
  std::string label;
  std::uint64_t bytes = 0;
};

// One stacked bar (the plan) against a budget, with an optional second bar of one measured figure.
struct StackChart {
  std::string id;
  std::string title;
  std::vector<StackSegment> segments;
  std::optional<std::uint64_t> budget;
  std::optional<std::uint64_t> load;  // the plan at load: a marker on the measured bar
  std::optional<std::uint64_t> measured;
};

// The chart as one <svg> element; segment i has class "seg seg-i" (the page's legend uses the
// same classes).
std::string svg_stack_chart(const StackChart& chart);

// `text` with &, <, >, " and ' escaped for HTML and SVG.
std::string html_escape(std::string_view text);

// The largest tick value ≥ `max` on a 1-2-5 scale and its step ("nice" axis limits).
std::pair<double, double> nice_axis(double max);

}  // namespace gb10tune::report
