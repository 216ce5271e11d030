// watch --metrics' exposition: the figures of the last sample, the thresholds and the counts
// of the events, in Prometheus' text format; and the --metrics address forms.
#include "gb10tune/watch/watch_metrics.hpp"

#include <gtest/gtest.h>

namespace gb10tune::watch {
namespace {

constexpr std::uint64_t kMetricsGiB = 1024ULL * 1024 * 1024;

bool exposes(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(WatchMetrics, BeforeTheFirstSampleOnlyTheSettingsAndCounts) {
  WatchMetrics metrics;
  metrics.thresholds = {12 * kMetricsGiB, 4 * kMetricsGiB, kMetricsGiB};
  const std::string text = render_prometheus(metrics);
  EXPECT_TRUE(text.starts_with("# HELP gb10tune_watch_warn_threshold_bytes "));
  EXPECT_TRUE(exposes(text, "# TYPE gb10tune_watch_warn_threshold_bytes gauge"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_warn_threshold_bytes 12884901888"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_floor_threshold_bytes 4294967296"));
  EXPECT_TRUE(exposes(text, "# TYPE gb10tune_watch_stops_total counter"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_stops_total 0"));
  EXPECT_EQ(text.find("mem_available"), std::string::npos);
  EXPECT_EQ(text.find("plan_bytes"), std::string::npos) << "no plan known";
}

TEST(WatchMetrics, TheLastSampleAndTheEventsCounted) {
  WatchMetrics metrics;
  metrics.thresholds = {12 * kMetricsGiB, 4 * kMetricsGiB, kMetricsGiB};
  metrics.plan_bytes = 20 * kMetricsGiB;
  Sample sample;
  sample.available_bytes = 3 * kMetricsGiB;
  sample.swap_total_bytes = 8 * kMetricsGiB;
  sample.swap_used_bytes = 512 * 1024 * 1024;
  sample.server_running = true;
  sample.server_rss_bytes = 21 * kMetricsGiB;
  sample.server_gpu_bytes = 300 * 1024 * 1024;
  metrics.last = sample;
  for (const EventKind kind :
       {EventKind::low, EventKind::recovered, EventKind::low, EventKind::floor, EventKind::stopped,
        EventKind::restart, EventKind::restarted, EventKind::restart_failed, EventKind::exited}) {
    Event event;
    event.kind = kind;
    count_event(metrics, event);
  }
  const std::string text = render_prometheus(metrics);
  EXPECT_TRUE(exposes(text, "gb10tune_watch_mem_available_bytes 3221225472"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_headroom_bytes -1073741824"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_swap_used_bytes 536870912"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_swap_total_bytes 8589934592"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_server_up 1"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_server_rss_bytes 22548578304"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_server_gpu_bytes 314572800"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_plan_bytes 21474836480"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_warnings_total 2"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_stops_total 1"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_restarts_total 1"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_restart_failures_total 1"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_exits_total 1"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gave_up 0"));
}

TEST(WatchMetrics, AServerThatIsDownHasNoFigures) {
  MetricsBoard board({12 * kMetricsGiB, 4 * kMetricsGiB, 0});
  Sample sample;
  sample.available_bytes = 50 * kMetricsGiB;
  sample.server_rss_bytes = 5 * kMetricsGiB;  // stale: the server is not running
  board.sample(sample);
  board.sample(sample);
  const std::string text = board.exposition();
  EXPECT_TRUE(exposes(text, "gb10tune_watch_server_up 0"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_samples_total 2"));
  EXPECT_EQ(text.find("server_rss_bytes"), std::string::npos);
}

// An H200 that reports everything and a GB10 that reports its temperature only.
std::vector<gpu::GpuReading> metrics_gpus() {
  gpu::GpuReading h200;
  h200.nvml_index = 0;
  h200.name = "NVIDIA H200";
  h200.temperature_celsius = 61;
  h200.power_watts = 123.456;
  h200.power_limit_watts = 700;
  h200.memory_used_bytes = kMetricsGiB;
  h200.memory_total_bytes = 140 * kMetricsGiB;
  gpu::GpuReading gb10;
  gb10.nvml_index = 1;
  gb10.name = "NVIDIA \"GB10\"\\x";
  gb10.temperature_celsius = 48;
  return {h200, gb10};
}

TEST(WatchMetrics, EachGpuInBaseUnitsWithItsIndexAndUnknownLeftOut) {
  WatchMetrics metrics;
  Sample sample;
  sample.gpus = metrics_gpus();
  metrics.last = sample;
  const std::string text = render_prometheus(metrics);
  EXPECT_TRUE(exposes(text, "# TYPE gb10tune_watch_gpu_info gauge"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_info{gpu=\"0\",name=\"NVIDIA H200\"} 1"));
  EXPECT_TRUE(exposes(text, R"(gb10tune_watch_gpu_info{gpu="1",name="NVIDIA \"GB10\"\\x"} 1)"))
      << text;
  EXPECT_TRUE(exposes(text, "# TYPE gb10tune_watch_gpu_temperature_celsius gauge"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_temperature_celsius{gpu=\"0\"} 61"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_temperature_celsius{gpu=\"1\"} 48"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_power_watts{gpu=\"0\"} 123.456"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_power_limit_watts{gpu=\"0\"} 700"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_memory_used_bytes{gpu=\"0\"} 1073741824"));
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_memory_total_bytes{gpu=\"0\"} 150323855360"));
  // The GB10's unknown figures are not written as 0: no line for gpu 1 at all.
  EXPECT_EQ(text.find("power_watts{gpu=\"1\"}"), std::string::npos) << text;
  EXPECT_EQ(text.find("memory_used_bytes{gpu=\"1\"}"), std::string::npos) << text;
  EXPECT_EQ(text.find("memory_total_bytes{gpu=\"1\"}"), std::string::npos) << text;
}

TEST(WatchMetrics, AFigureNoGpuHasIsNoFamily) {
  WatchMetrics metrics;
  Sample sample;
  sample.gpus = {metrics_gpus()[1]};
  metrics.last = sample;
  const std::string text = render_prometheus(metrics);
  EXPECT_TRUE(exposes(text, "gb10tune_watch_gpu_temperature_celsius{gpu=\"1\"} 48")) << text;
  EXPECT_EQ(text.find("gpu_power"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu_memory"), std::string::npos) << text;
  // Without NVML there are no GPU families at all.
  metrics.last->gpus.clear();
  EXPECT_EQ(render_prometheus(metrics).find("gpu_"), std::string::npos);
}

TEST(WatchMetrics, AddressesDefaultToLoopback) {
  EXPECT_EQ(parse_metrics_address("9464")->to_string(), "127.0.0.1:9464");
  EXPECT_EQ(parse_metrics_address(":9464")->to_string(), "127.0.0.1:9464");
  EXPECT_EQ(parse_metrics_address("0.0.0.0:9100")->to_string(), "0.0.0.0:9100");
  EXPECT_EQ(parse_metrics_address("[::1]:9100")->to_string(), "[::1]:9100");
  const auto bad = parse_metrics_address("localhost:");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::usage);
  EXPECT_NE(bad.error().message.find("--metrics 'localhost:'"), std::string::npos);
  EXPECT_FALSE(parse_metrics_address("70000"));
}

}  // namespace
}  // namespace gb10tune::watch
