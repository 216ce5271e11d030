// `gb10tune watch --metrics` as the real binary against the stand-in llama-server: the
// exposition parses with the Prometheus client's own parser and agrees with /proc, and a port
// that is taken is a usage error naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/http_listener.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/background_run.hpp"
#include "support/stand_in.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// Fetches `url` until it answers with the server's RSS (10 s at most) and parses it with
// prometheus_client's text parser: "name value" per sample, or the error.
std::map<std::string, double> scrape_and_parse(const std::string& url, std::string& error) {
  const std::string script = R"(
import sys, time, urllib.request
from prometheus_client.parser import text_string_to_metric_families
text = ""
for _ in range(100):
    try:
        text = urllib.request.urlopen(sys.argv[1], timeout=2).read().decode()
        if "gb10tune_watch_server_rss_bytes" in text:
            break
    except OSError:
        pass
    time.sleep(0.1)
for family in text_string_to_metric_families(text):
    for sample in family.samples:
        print(sample.name, repr(sample.value))
)";
  // The distribution's interpreter: python3-prometheus-client installs for it.
  const auto run = platform::run_capture({"/usr/bin/python3", "-c", script, url}, 30s);
  std::map<std::string, double> values;
  if (!run || run->exit_status != 0) {
    error = run ? run->output : run.error().message;
    return values;
  }
  std::istringstream lines(run->output);
  std::string name;
  double value = 0;
  while (lines >> name >> value) {
    values[name] = value;
  }
  return values;
}

TEST(CliWatchMetrics, AScrapeParsesAndAgreesWithProc) {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  const launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");
  const int pid = start_stand_in_through_launch(paths);
  ASSERT_NE(pid, 0);
  const int port = free_tcp_port();
  BackgroundRun watch({"watch", "--metrics", std::to_string(port), "--interval", "0.2"}, {});
  std::string error;
  const auto values = scrape_and_parse(fmt::format("http://127.0.0.1:{}/metrics", port), error);
  ASSERT_TRUE(error.empty()) << error;
  const auto rss = sys::read_process_memory(platform::Sysroot(), pid);
  const auto meminfo = sys::read_meminfo(platform::Sysroot());
  (void)launch::stop_server(platform::Sysroot(), paths, 2s);
  ASSERT_TRUE(rss && meminfo);
  EXPECT_EQ(values.at("gb10tune_watch_server_up"), 1);
  EXPECT_NEAR(values.at("gb10tune_watch_server_rss_bytes"), static_cast<double>(rss->vm_rss),
              0.2 * static_cast<double>(rss->vm_rss));
  EXPECT_NEAR(values.at("gb10tune_watch_mem_available_bytes"),
              static_cast<double>(meminfo->available_bytes),
              0.1 * static_cast<double>(meminfo->available_bytes));
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
