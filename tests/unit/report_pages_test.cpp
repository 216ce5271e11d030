#include "gb10tune/report/report_pages.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gb10tune/report/report_bundle.hpp"
#include "support/report_states.hpp"
#include "support/test_context.hpp"
#include "support/text_tables.hpp"

namespace gb10tune {
namespace {

using testing::contains;

report::ReportView pages_test_view(const std::string& state) {
  return report::make_report_view(testing::captured_report_state(state));
}

std::size_t pages_test_count(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

TEST(ReportPages, HtmlIsOneSelfContainedFile) {
  for (const char* state : {"h200", "cpu-server"}) {
    const std::string html = report::render_report_html(pages_test_view(state));
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_FALSE(contains(html, "<script")) << state;
    EXPECT_FALSE(contains(html, "<link")) << state;
    EXPECT_FALSE(contains(html, " src=")) << state;
    EXPECT_FALSE(contains(html, "href=")) << state;
    EXPECT_FALSE(contains(html, "url(")) << state;
    EXPECT_TRUE(contains(html, "<meta name=\"viewport\"")) << state;
  }
}

TEST(ReportPages, H200HtmlDrawsBandwidthAndBoxesTheRest) {
  const std::string html = report::render_report_html(pages_test_view("h200"));
  EXPECT_EQ(pages_test_count(html, "<svg "), 1u);
  EXPECT_TRUE(contains(html, "data-chart=\"bandwidth\""));
  // 16 measured cases as bars, the 6 waived ones (no pageable access on the H200) in one note.
  EXPECT_EQ(pages_test_count(html, "class=\"point bar\""), 16u);
  EXPECT_TRUE(contains(html,
                       "Not measured (waived: pageable memory is not GPU-accessible here "
                       "(pageableMemoryAccess = 0)): pageable_malloc read, pageable_malloc "
                       "write, pageable_malloc copy, pageable_mmap read, pageable_mmap "
                       "write, pageable_mmap copy."));
  EXPECT_TRUE(contains(html, "nominal peak 4800 GB/s"));
  for (const char* command : {"gb10tune launch", "gb10tune verify",
                              "gb10tune bench server --save NAME", "gb10tune tune"}) {
    EXPECT_TRUE(contains(html, std::string("<code>") + command + "</code>")) << command;
  }
}

TEST(ReportPages, CpuServerHtmlDrawsPlanRunsAndSweep) {
  const std::string html = report::render_report_html(pages_test_view("cpu-server"));
  for (const char* chart : {"memory", "memory-parts", "decode", "prefill", "tune"}) {
    EXPECT_TRUE(contains(html, std::string("data-chart=\"") + chart + "\"")) << chart;
  }
  EXPECT_FALSE(contains(html, "data-chart=\"bandwidth\""));
  EXPECT_TRUE(contains(html, "<div class=\"missing\" data-part=\"bandwidth\">"));
  EXPECT_TRUE(contains(html, "<div class=\"missing\" data-part=\"roofline\">"));
  EXPECT_TRUE(contains(html, "class=\"point measured\""));
  EXPECT_TRUE(contains(html, "<li class=\"check sev-"));
}

TEST(ReportPages, EmptyStateHasNoChartOnlyBoxes) {
  const std::string html = report::render_report_html(report::ReportView{});
  EXPECT_EQ(pages_test_count(html, "<svg"), 0u);
  EXPECT_EQ(pages_test_count(html, "<div class=\"missing\""), 0u);  // nothing computed: no list
  testing::TempDir dir;
  const auto bundle = report::load_report_bundle(dir.path());
  ASSERT_TRUE(bundle);
  const std::string empty = report::render_report_html(report::make_report_view(*bundle));
  EXPECT_EQ(pages_test_count(empty, "<svg"), 0u);
  EXPECT_EQ(pages_test_count(empty, "<div class=\"missing\""), 7u);
}

TEST(ReportPages, MarkdownTablesAreWellFormed) {
  for (const char* state : {"h200", "cpu-server"}) {
    const std::string md = report::render_report_markdown(pages_test_view(state));
    const auto tables = testing::markdown_table_problems(md);
    EXPECT_TRUE(tables.problems.empty()) << state << ": " << tables.problems.front();
    EXPECT_GE(tables.count, 1u) << state;
    EXPECT_EQ(pages_test_count(md, "```") % 2, 0u) << state;
  }
}

TEST(ReportPages, MarkdownCarriesTheSameFiguresAsTheHtml) {
  const report::ReportView view = pages_test_view("h200");
  const std::string md = report::render_report_markdown(view);
  for (const report::BandwidthBar& bar : view.bandwidth->bars) {
    if (bar.status == "ok") {
      EXPECT_TRUE(contains(md, fmt::format("| {} | {:.1f} |", bar.label, bar.median_gbps)))
          << bar.label;
    }
  }
  EXPECT_TRUE(contains(md, "**Machine:** NVIDIA H200"));
  EXPECT_TRUE(contains(md,
                       "> **Not in the state directory:** the memory plan. Run `gb10tune "
                       "launch` to add it."));
}

TEST(ReportPages, TextInTheStateIsEscaped) {
  report::ReportView view;
  view.machine = "<b>spark</b> & \"co\"";
  view.verify =
      report::VerifyView{"fail", "pid 1", {{"fail", "x", "K2", "a | b <i>", "e", ""}}, "", ""};
  const std::string html = report::render_report_html(view);
  EXPECT_FALSE(contains(html, "<b>spark"));
  EXPECT_TRUE(contains(html, "&lt;b&gt;spark&lt;/b&gt; &amp; &quot;co&quot;"));
  EXPECT_TRUE(contains(html, "a | b &lt;i&gt;"));
  const std::string md = report::render_report_markdown(view);
  EXPECT_TRUE(contains(md, "a \\| b <i>"));
  EXPECT_TRUE(testing::markdown_table_problems(md).problems.empty());
}

}  // namespace
}  // namespace gb10tune
