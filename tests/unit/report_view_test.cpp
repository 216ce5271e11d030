#include "gb10tune/report/report_view.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "gb10tune/render/tune_render.hpp"
#include "gb10tune/report/report_bundle.hpp"
#include "gb10tune/tune/tune_journal.hpp"
#include "support/report_states.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::fixture;

report::ReportBundle view_test_bundle(const std::string& state) {
  return testing::captured_report_state(state);
}

json view_test_json(const std::string& relative) {
  return json::parse(testing::read_text(fixture("report/" + relative)));
}

TEST(ReportView, BandwidthBarsAreTheH200BenchFiguresAsSaved) {
  const report::ReportView view = report::make_report_view(view_test_bundle("h200"));
  ASSERT_TRUE(view.bandwidth);
  const json bench = view_test_json("h200/bench.json");
  EXPECT_EQ(view.bandwidth->source, "gb10tune bench");
  EXPECT_EQ(view.bandwidth->device, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(view.bandwidth->peak_gbps, bench["peak_bytes_per_second"].get<double>() / 1e9);
  EXPECT_EQ(view.bandwidth->verdict, bench["verdict"]);
  ASSERT_EQ(view.bandwidth->bars.size(), bench["cases"].size());
  for (std::size_t i = 0; i < bench["cases"].size(); ++i) {
    const json& c = bench["cases"][i];
    const report::BandwidthBar& bar = view.bandwidth->bars[i];
    EXPECT_EQ(bar.label,
              c["allocator"].get<std::string>() + " " + c["operation"].get<std::string>());
    EXPECT_EQ(bar.status, c["status"]);
    EXPECT_DOUBLE_EQ(bar.median_gbps, c["gbps"]["median"].get<double>());
    EXPECT_DOUBLE_EQ(bar.min_gbps, c["gbps"]["min"].get<double>());
    EXPECT_DOUBLE_EQ(bar.max_gbps, c["gbps"]["max"].get<double>());
    EXPECT_DOUBLE_EQ(bar.percent_of_peak, c["percent_of_peak"].get<double>());
  }
  EXPECT_EQ(view.machine,
            "NVIDIA H200 · 16 × Intel(R) Xeon(R) Processor · x86_64 · Ubuntu 24.04.3 LTS");
}

TEST(ReportView, ProbesQuickBenchStandsInForAMissingFullBench) {
  report::ReportBundle bundle = view_test_bundle("h200");
  bundle.bench.reset();
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_TRUE(view.bandwidth);
  EXPECT_EQ(view.bandwidth->source, "gb10tune probe --quick-bench");
  const json quick = view_test_json("h200/probe.json")["bandwidth"]["result"];
  ASSERT_EQ(view.bandwidth->bars.size(), quick["cases"].size());
  EXPECT_DOUBLE_EQ(view.bandwidth->bars[0].median_gbps,
                   quick["cases"][0]["gbps"]["median"].get<double>());
}

TEST(ReportView, MemorySegmentsAddUpToThePlansTotalAgainstItsBudget) {
  const report::ReportView view = report::make_report_view(view_test_bundle("cpu-server"));
  ASSERT_TRUE(view.memory);
  const json plan = view_test_json("cpu-server/launch.json")["plan"]["plan"];
  const std::uint64_t sum = std::accumulate(
      view.memory->segments.begin(), view.memory->segments.end(), std::uint64_t{0},
      [](std::uint64_t total, const report::MemorySegment& s) { return total + s.bytes; });
  EXPECT_EQ(sum, plan["total_bytes"].get<std::uint64_t>());
  EXPECT_EQ(view.memory->total_bytes, plan["total_bytes"].get<std::uint64_t>());
  EXPECT_EQ(view.memory->budget_bytes, plan["available_bytes"].get<std::uint64_t>());
  ASSERT_GE(view.memory->segments.size(), 3u);
  EXPECT_EQ(view.memory->segments[0].label, "weights");
  EXPECT_EQ(view.memory->segments[0].bytes, plan["weights_bytes"].get<std::uint64_t>());
  EXPECT_EQ(view.memory->segments[1].label, "KV cache");
  EXPECT_EQ(view.memory->segments[1].bytes,
            plan["kv_full_bytes"].get<std::uint64_t>() + plan["kv_swa_bytes"].get<std::uint64_t>());
}

TEST(ReportView, MeasuredMemoryIsVerifysFigure) {
  const report::ReportView view = report::make_report_view(view_test_bundle("cpu-server"));
  ASSERT_TRUE(view.memory && view.memory->measured_bytes);
  std::string evidence;
  const json verify = view_test_json("cpu-server/verify.json");
  for (const json& check : verify["servers"][0]["checks"]) {
    if (check["id"] == "plan-vs-measured") {
      evidence = check["evidence"].get<std::string>();
    }
  }
  EXPECT_EQ(view.memory->measured_evidence, evidence);
  // "measured 232.1 MiB (RSS …": the figure verify printed, to its 0.1 MiB.
  ASSERT_NE(evidence.find("measured "), std::string::npos) << evidence;
  const std::string figure = evidence.substr(evidence.find("measured ") + 9);
  const double mib = std::stod(figure);
  EXPECT_NEAR(static_cast<double>(*view.memory->measured_bytes) / (1 << 20), mib, 0.051);
}

// What a new user met: the "plan at load" row showed the plan with every buffer (launch's
// load_bytes) beside the measured size, which read as a 63% miss. The figure at load is the
// one launch and verify compare with: the record's load_bytes less what batches touch later.
TEST(ReportView, PlanAtLoadIsTheFigureVerifyComparedWith) {
  const report::ReportView view = report::make_report_view(view_test_bundle("cpu-server"));
  ASSERT_TRUE(view.memory);
  // launch.json: expected.load_bytes 596458782 − expected.on_demand_bytes 405834808; verify's
  // evidence says "plan at load 181.8 MiB, 568.8 MiB with the 387.0 MiB of buffers".
  EXPECT_EQ(view.memory->load_bytes, 190623974u);
  EXPECT_EQ(view.memory->with_buffers_bytes, 596458782u);
}

// What a new user met: a verify of an earlier server (another pid) was drawn under a later
// launch's plan as if it measured that server.
TEST(ReportView, AVerifyOfAnotherServerIsNotPairedWithTheLaunch) {
  report::ReportBundle bundle = view_test_bundle("cpu-server");
  bundle.verify->doc["servers"][0]["pid"] = 4242;
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_TRUE(view.memory && view.verify);
  EXPECT_FALSE(view.memory->measured_bytes);
  EXPECT_EQ(view.verify->other_server,
            "This verify checked pid 4242, not pid 19337 that the last gb10tune launch started "
            "(2026-12-02T03:47:22Z): its findings are of another server. Run gb10tune verify "
            "for the launched one.");
  bool named = false;
  for (const report::MissingPart& missing : view.missing) {
    named = named || (missing.section == "memory" && missing.command == "gb10tune verify");
  }
  EXPECT_TRUE(named);
}

// A verify saved before the launch (the same pid reused, or the clock says so) is older than
// the server it would describe.
TEST(ReportView, AVerifyOlderThanTheLaunchIsNotPairedWithIt) {
  report::ReportBundle bundle = view_test_bundle("cpu-server");
  bundle.verify->saved_at = "2026-12-02T03:40:00Z";
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_TRUE(view.memory && view.verify);
  EXPECT_FALSE(view.memory->measured_bytes);
  EXPECT_EQ(view.verify->other_server,
            "This verify (saved 2026-12-02T03:40:00Z) ran before the last gb10tune launch "
            "(2026-12-02T03:47:22Z): its findings are of an earlier server. Run gb10tune verify "
            "for the launched one.");
}

// What a new user met: a verify that found no server showed only "verdict fail".
TEST(ReportView, AVerifyThatFoundNoServerSaysWhy) {
  report::ReportBundle bundle = view_test_bundle("cpu-server");
  bundle.verify->doc = json::parse(
      R"({"command":"verify","error":"no llama-server is running","exit_code":1,"notes":[],)"
      R"("schema_version":1,"servers":[],"strict":false,"verdict":"fail"})");
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_TRUE(view.verify);
  EXPECT_EQ(view.verify->no_server, "no llama-server is running");
  EXPECT_TRUE(view.verify->checks.empty());
}

TEST(ReportView, RunsAreTheSavedMediansAndIntervals) {
  const report::ReportView view = report::make_report_view(view_test_bundle("cpu-server"));
  ASSERT_EQ(view.runs.size(), 2u);
  for (const report::RunView& run : view.runs) {
    const json doc = view_test_json("cpu-server/bench/" + run.name + ".json");
    const json& decode = doc["levels"][0]["metrics"]["decode_tps"];
    EXPECT_DOUBLE_EQ(run.decode.median, decode["median"].get<double>());
    EXPECT_DOUBLE_EQ(run.decode.low, decode["median_interval"]["low"].get<double>());
    EXPECT_DOUBLE_EQ(run.decode.high, decode["median_interval"]["high"].get<double>());
    EXPECT_DOUBLE_EQ(run.decode.confidence, decode["median_interval"]["confidence"].get<double>());
    const json& prefill = doc["levels"][0]["metrics"]["prefill_tps"];
    EXPECT_DOUBLE_EQ(run.prefill.median, prefill["median"].get<double>());
    EXPECT_EQ(run.build, doc["server"]["build_info"]);
    EXPECT_EQ(run.date, doc["date"]);
    EXPECT_EQ(run.samples, decode["count"].get<int>());
  }
  EXPECT_EQ(view.runs[0].speculative, "draft-mtp, n-max 2");
  EXPECT_EQ(view.runs[1].speculative, "draft-mtp, n-max 4");
}

TEST(ReportView, SweepIsTheTuneReportsChartRows) {
  const report::ReportBundle bundle = view_test_bundle("cpu-server");
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_TRUE(view.sweep);
  const auto journal = tune::parse_journal(
      testing::read_text(fixture("report/cpu-server/tune-journal.jsonl")), "journal");
  ASSERT_TRUE(journal);
  tune::TuneResult result;
  result.start = *journal->start;
  result.candidates = journal->candidates;
  std::string knob;
  const auto rows = render::tune_sweep_rows(result, knob);
  EXPECT_EQ(view.sweep->knob, knob);
  ASSERT_EQ(view.sweep->points.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_NE(rows[i].measured, nullptr);
    EXPECT_DOUBLE_EQ(view.sweep->points[i].figure.median, rows[i].measured->stats.median);
    EXPECT_DOUBLE_EQ(view.sweep->points[i].figure.low, rows[i].measured->interval.low);
  }
  EXPECT_EQ(view.sweep->candidates, static_cast<int>(journal->candidates.size()));
}

TEST(ReportView, EveryMissingPartNamesTheCommandThatProducesIt) {
  testing::TempDir dir;
  const auto bundle = report::load_report_bundle(dir.path());
  ASSERT_TRUE(bundle);
  const report::ReportView view = report::make_report_view(*bundle);
  std::vector<std::string> sections;
  for (const report::MissingPart& missing : view.missing) {
    sections.push_back(missing.section + ": " + missing.command);
  }
  EXPECT_EQ(sections,
            (std::vector<std::string>{
                "machine: gb10tune probe", "bandwidth: gb10tune bench", "memory: gb10tune launch",
                "verify: gb10tune verify", "runs: gb10tune bench server --save NAME",
                "roofline: gb10tune probe --quick-bench && gb10tune bench server --save NAME",
                "tune: gb10tune tune"}));
}

TEST(ReportView, RooflineIsTheRunsSavedShareOfTheCeiling) {
  report::ReportBundle bundle = view_test_bundle("cpu-server");
  // The captured CPU runs have no bandwidth, so no roofline: this one is constructed.
  json& roof = bundle.runs[1].doc["roofline"];
  roof = {{"available", true},          {"ceiling_tps", 71.0},    {"measured_tps", 17.5},
          {"percent_of_ceiling", 24.6}, {"bytes_source", "GGUF"}, {"bandwidth_source", "probe"}};
  const report::ReportView view = report::make_report_view(bundle);
  ASSERT_EQ(view.rooflines.size(), 1u);
  EXPECT_EQ(view.rooflines[0].run, "depth4");
  EXPECT_DOUBLE_EQ(view.rooflines[0].percent, 24.6);
  EXPECT_DOUBLE_EQ(view.rooflines[0].ceiling_tps, 71.0);
  for (const report::MissingPart& missing : view.missing) {
    EXPECT_NE(missing.section, "roofline");
  }
}

}  // namespace
}  // namespace gb10tune
