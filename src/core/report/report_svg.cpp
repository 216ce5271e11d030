#include "report_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::report {

namespace {

constexpr double kWidth = 400;      // the viewBox's width
constexpr double kPlotLeft = 6;     // where bars start
constexpr double kPlotRight = 300;  // where the axis ends; value texts go to its right
constexpr double kRowHeight = 30;
constexpr double kTop = 20;  // room for the reference line's label

double x_of(double value, double axis_max) {
  return kPlotLeft + (kPlotRight - kPlotLeft) * std::clamp(value / axis_max, 0.0, 1.05);
}

std::string tick_text(double value) {
  return value == std::floor(value) ? fmt::format("{:.0f}", value) : fmt::format("{:g}", value);
}

// The x axis at `y`: a line, a tick and a label every step, the unit at the right.
std::string x_axis(double y, double axis_max, double step, std::string_view unit) {
  std::string out = fmt::format(
      R"(<g class="axis" data-axis="x" data-max="{}" data-unit="{}"><line x1="{}" y1="{}" x2="{}" y2="{}"/>)",
      axis_max, html_escape(unit), kPlotLeft, y, kPlotRight, y);
  for (double tick = 0; tick <= axis_max + step / 2; tick += step) {
    const double x = x_of(tick, axis_max);
    out += fmt::format(
        R"(<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}"/><text class="tick" x="{:.1f}" y="{}" data-value="{}">{}</text>)",
        x, y, x, y + 4, x, y + 15, tick, tick_text(tick));
  }
  return out + fmt::format(R"(<text class="unit" x="{}" y="{}">{}</text></g>)", kPlotRight + 20,
                           y + 15, html_escape(unit));
}

std::string bar_row(const ChartRow& row, double y, double axis_max) {
  std::string out = fmt::format(R"(<text class="label" x="{}" y="{}">{}</text>)", kPlotLeft, y + 11,
                                html_escape(row.label));
  if (!row.value) {
    return out + fmt::format(R"(<text class="note" x="{}" y="{}">{}</text>)", kPlotLeft + 4, y + 26,
                             html_escape(row.note));
  }
  const double x = x_of(*row.value, axis_max);
  out += fmt::format(
      R"(<rect class="point bar" x="{}" y="{}" width="{:.1f}" height="12" data-label="{}" data-value="{}")",
      kPlotLeft, y + 15, std::max(0.5, x - kPlotLeft), html_escape(row.label), *row.value);
  if (row.low && row.high) {
    out += fmt::format(R"( data-low="{}" data-high="{}")", *row.low, *row.high);
  }
  out += fmt::format("><title>{}: {}</title></rect>", html_escape(row.label),
                     html_escape(row.value_text));
  if (row.low && row.high) {
    const double x1 = x_of(*row.low, axis_max);
    const double x2 = x_of(*row.high, axis_max);
    const double mid = y + 21;
    out += fmt::format(R"(<path class="whisker" d="M{:.1f} {}H{:.1f}M{:.1f} {}V{}M{:.1f} {}V{}"/>)",
                       x1, mid, x2, x1, mid - 5, mid + 5, x2, mid - 5, mid + 5);
  }
  return out + fmt::format(R"(<text class="value" x="{}" y="{}">{}</text>)", kPlotRight + 6, y + 25,
                           html_escape(row.value_text));
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::pair<double, double> nice_axis(double max) {
  if (!(max > 0) || !std::isfinite(max)) {
    return {1, 0.2};
  }
  const double magnitude = std::pow(10.0, std::floor(std::log10(max)));
  for (double step : {0.1, 0.2, 0.25, 0.5, 1.0, 2.0}) {
    const double s = step * magnitude;
    if (std::ceil(max / s - 1e-9) <= 6) {
      return {std::ceil(max / s - 1e-9) * s, s};
    }
  }
  return {std::ceil(max / (5 * magnitude)) * 5 * magnitude, 5 * magnitude};
}

std::string svg_bar_chart(const BarChart& chart) {
  double max = chart.reference.value_or(0);
  for (const ChartRow& row : chart.rows) {
    max = std::max({max, row.value.value_or(0), row.high.value_or(0)});
  }
  const auto [axis_max, step] = nice_axis(max);
  const double axis_y = kTop + kRowHeight * static_cast<double>(chart.rows.size()) + 4;
  const double height = axis_y + 24;
  std::string out = fmt::format(
      R"(<svg class="chart" data-chart="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">)",
      chart.id, kWidth, height, html_escape(chart.title));
  out += fmt::format(R"(<g class="axis" data-axis="y"><line x1="{}" y1="{}" x2="{}" y2="{}"/>)",
                     kPlotLeft, kTop, kPlotLeft, axis_y);
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    out += bar_row(chart.rows[i], kTop + kRowHeight * static_cast<double>(i), axis_max);
  }
  out += "</g>" + x_axis(axis_y, axis_max, step, chart.unit);
  if (chart.reference) {
    const double x = x_of(*chart.reference, axis_max);
    out += fmt::format(
        R"(<g class="reference" data-value="{}"><line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}"/><text x="{:.1f}" y="{}">{}</text></g>)",
        *chart.reference, x, kTop, x, axis_y, x - 2, kTop - 1, html_escape(chart.reference_label));
  }
  return out + "</svg>";
}

std::string svg_stack_chart(const StackChart& chart) {
  std::uint64_t total = 0;
  for (const StackSegment& s : chart.segments) {
    total += s.bytes;
  }
  const double max =
      static_cast<double>(std::max({total, chart.budget.value_or(0), chart.measured.value_or(0)}));
  const auto [axis_max, step] =
      nice_axis(max / (1024.0 * 1024 * 1024) >= 1 ? max / (1 << 30) : max / (1 << 20));
  const double scale = max / (1 << 30) >= 1 ? double(1 << 30) : double(1 << 20);
  const std::string unit = scale > double(1 << 20) ? "GiB" : "MiB";
  const double rows = chart.measured ? 2 : 1;
  const double axis_y = kTop + kRowHeight * rows + 4;
  std::string out = fmt::format(
      R"(<svg class="chart" data-chart="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg"><g class="axis" data-axis="y"><line x1="{}" y1="{}" x2="{}" y2="{}"/>)",
      chart.id, kWidth, axis_y + 24, html_escape(chart.title), kPlotLeft, kTop, kPlotLeft, axis_y);
  out += fmt::format(R"(<text class="label" x="{}" y="{}">plan</text>)", kPlotLeft, kTop + 11);
  double at = 0;
  for (std::size_t i = 0; i < chart.segments.size(); ++i) {
    const StackSegment& s = chart.segments[i];
    const double x1 = x_of(at / scale, axis_max);
    at += static_cast<double>(s.bytes);
    const double x2 = x_of(at / scale, axis_max);
    out += fmt::format(
        R"(<rect class="point seg seg-{}" x="{:.2f}" y="{}" width="{:.2f}" height="14" data-label="{}" data-bytes="{}"><title>{}: {}</title></rect>)",
        i, x1, kTop + 15, std::max(0.3, x2 - x1), html_escape(s.label), s.bytes,
        html_escape(s.label), format_bytes(s.bytes));
  }
  out += fmt::format(R"(<text class="value" x="{}" y="{}">{}</text>)", kPlotRight + 6, kTop + 26,
                     format_bytes(total));
  if (chart.measured) {
    const double y = kTop + kRowHeight;
    out += fmt::format(
        R"(<text class="label" x="{}" y="{}">measured (verify)</text><rect class="point measured" x="{}" y="{}" width="{:.2f}" height="14" data-label="measured" data-bytes="{}"><title>measured: {}</title></rect><text class="value" x="{}" y="{}">{}</text>)",
        kPlotLeft, y + 11, kPlotLeft, y + 15,
        std::max(0.3, x_of(double(*chart.measured) / scale, axis_max) - kPlotLeft), *chart.measured,
        format_bytes(*chart.measured), kPlotRight + 6, y + 26, format_bytes(*chart.measured));
    if (chart.load) {
      const double x = x_of(double(*chart.load) / scale, axis_max);
      out += fmt::format(
          R"(<line class="load-marker" data-bytes="{}" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}"><title>plan at load: {}</title></line>)",
          *chart.load, x, y + 11, x, y + 33, format_bytes(*chart.load));
    }
  }
  out += "</g>" + x_axis(axis_y, axis_max, step, unit);
  if (chart.budget) {
    const double x = x_of(double(*chart.budget) / scale, axis_max);
    out += fmt::format(
        R"(<g class="reference" data-bytes="{}"><line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}"/><text x="{:.1f}" y="{}">budget {}</text></g>)",
        *chart.budget, x, kTop, x, axis_y, x - 2, kTop - 1, format_bytes(*chart.budget));
  }
  return out + "</svg>";
}

}  // namespace gb10tune::report
