// `gb10tune watch --metrics` as the real binary against the stand-in llama-server: the
// exposition parses with the Prometheus client's own parser and agrees with /proc, and a port
// that is taken is a usage error naming it.
#include <gtest/gtest.h>

#include <algorithm>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/http_listener.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/background_run.hpp"
#include "support/prometheus_scrape.hpp"
#include "support/stand_in.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

TEST(CliWatchMetrics, AScrapeParsesAndAgreesWithProc) {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  const launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");
  const int pid = start_stand_in_through_launch(paths);
  ASSERT_NE(pid, 0);
  const int port = free_tcp_port();
  BackgroundRun watch({"watch", "--metrics", std::to_string(port), "--interval", "0.2"}, {});
  // What /proc says before and after the scrape brackets what watch sampled in between: other
  // work on a loaded machine moves MemAvailable by more than a fixed tolerance allows.
  const auto meminfo_before = sys::read_meminfo(platform::Sysroot());
  std::string error;
  const auto values = scrape_prometheus(fmt::format("http://127.0.0.1:{}/metrics", port),
                                        "gb10tune_watch_server_rss_bytes", error);
  ASSERT_TRUE(error.empty()) << error;
  const auto rss = sys::read_process_memory(platform::Sysroot(), pid);
  const auto meminfo_after = sys::read_meminfo(platform::Sysroot());
  (void)launch::stop_server(platform::Sysroot(), paths, 2s);
  ASSERT_TRUE(rss && meminfo_before && meminfo_after);
  EXPECT_EQ(values.at("gb10tune_watch_server_up"), 1);
  EXPECT_NEAR(values.at("gb10tune_watch_server_rss_bytes"), static_cast<double>(rss->vm_rss),
              0.2 * static_cast<double>(rss->vm_rss));
  const auto [low, high] =
      std::minmax(meminfo_before->available_bytes, meminfo_after->available_bytes);
  EXPECT_GE(values.at("gb10tune_watch_mem_available_bytes"), 0.95 * static_cast<double>(low));
  EXPECT_LE(values.at("gb10tune_watch_mem_available_bytes"), 1.05 * static_cast<double>(high));
  EXPECT_EQ(values.at("gb10tune_watch_headroom_bytes"),
            values.at("gb10tune_watch_mem_available_bytes") -
                values.at("gb10tune_watch_floor_threshold_bytes"));
  EXPECT_GE(values.at("gb10tune_watch_samples_total"), 1);
  EXPECT_EQ(values.at("gb10tune_watch_stops_total"), 0);
  EXPECT_EQ(values.count("gb10tune_watch_swap_used_bytes"), 1U);
}

TEST(CliWatchMetrics, APortInUseIsAUsageErrorNamingIt) {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  auto taken = platform::HttpListener::start(
      "127.0.0.1", 0, [](const platform::HttpRequest&) { return platform::HttpAnswer{}; });
  ASSERT_TRUE(taken);
  const std::string port = std::to_string((*taken)->port());
  const CliResult result = run_binary({"watch", "--wait", "--once", "--metrics", port});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find("cannot listen on 127.0.0.1:" + port), std::string::npos) << result.out;
  const CliResult bad = run_binary({"watch", "--wait", "--once", "--metrics", "localhost"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--metrics 'localhost'"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace gb10tune::testing
