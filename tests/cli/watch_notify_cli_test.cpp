// `gb10tune watch --notify` as the real binary against the stand-in llama-server, with
// MemAvailable replayed: a receiver on loopback gets exactly one event per edge, in order, and a
// receiver that hangs does not delay a sample (the events' sample times are measured).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/platform/http_listener.hpp"
#include "support/stand_in.hpp"
#include "support/tls_peer.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;

// A webhook receiver on 127.0.0.1 that keeps every body; each answer waits `hang` first.
struct WebhookReceiver {
  std::mutex mutex;
  std::vector<nlohmann::json> bodies;
  std::unique_ptr<platform::HttpListener> listener;

  explicit WebhookReceiver(std::chrono::milliseconds hang) {
    auto started = platform::HttpListener::start(
        "127.0.0.1", 0, [this, hang](const platform::HttpRequest& request) {
          {
            const std::lock_guard lock(mutex);
            bodies.push_back(nlohmann::json::parse(request.body, nullptr, false));
          }
          std::this_thread::sleep_for(hang);
          return platform::HttpAnswer{200, "text/plain", "ok\n"};
        });
    EXPECT_TRUE(started);
    if (started) {
      listener = std::move(*started);
    }
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}/hook", listener->port()); }
};

// `watch --notify URL --json` on the stand-in over MemAvailable 50, 10, 10, 50, 50, 10 GiB
// (--warn 20 GiB): heartbeat, warn, clear, warn. Returns the watch's JSON lines.
std::vector<nlohmann::json> watch_with_notify(const std::string& url, TempDir& dir) {
  for (const auto& [i, gib] :
       std::vector<std::pair<int, int>>{{0, 50}, {1, 10}, {2, 10}, {3, 50}, {4, 50}, {5, 10}}) {
    dir.write(fmt::format("replay/meminfo.{:03d}", i),
              fmt::format("MemTotal: 125829120 kB\nMemFree: {0} kB\nMemAvailable: {0} kB\n",
                          static_cast<std::uint64_t>(gib) * 1024 * 1024));
  }
  const CliResult result =
      run_binary({"watch", "--json", "--notify", url, "--warn", "20GiB", "--floor", "2GiB",
                  "--hysteresis", "1GiB", "--interval", "0.1", "--max-samples", "6",
                  "--replay-meminfo", (dir.path() / "replay").string()});
  EXPECT_EQ(result.exit_code, 0) << result.out;
  std::vector<nlohmann::json> lines;
  std::istringstream in(result.out);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return lines;
}

// The "notify/event" of each body the receiver got, in order.
std::vector<std::string> received_edges(WebhookReceiver& receiver) {
  const std::lock_guard lock(receiver.mutex);
  std::vector<std::string> edges;
  for (const auto& body : receiver.bodies) {
    edges.push_back(body.value("notify", "?") + "/" + body.value("event", "?"));
  }
  return edges;
}

struct NotifyFixture {
  TempDir dir;
  ScopedEnv state{"XDG_STATE_HOME", dir.path().string()};
  launch::StatePaths paths = launch::StatePaths::under(dir.path() / "gb10tune");
  NotifyFixture() { EXPECT_NE(start_stand_in_through_launch(paths), 0); }
  ~NotifyFixture() { (void)launch::stop_server(platform::Sysroot(), paths, 2s); }
};

TEST(CliWatchNotify, OneEventPerEdgeInOrder) {
  NotifyFixture f;
  WebhookReceiver receiver(0ms);
  const auto lines = watch_with_notify(receiver.url(), f.dir);
  EXPECT_EQ(received_edges(receiver), (std::vector<std::string>{"heartbeat/watching", "warn/low",
                                                                "clear/recovered", "warn/low"}))
      << lines.size() << " lines printed";
}

TEST(CliWatchNotify, AnHttpsReceiverGetsEachEventOnce) {
  const ScopedEnv ca("SSL_CERT_FILE", test_ca_file());
  NotifyFixture f;
  WebhookReceiver receiver(0ms);
  HostilePeer front(tls_front("server", receiver.listener->port()), PeerStart::at_once);
  const auto lines = watch_with_notify(https_url(front) + "/hook", f.dir);
  EXPECT_EQ(received_edges(receiver), (std::vector<std::string>{"heartbeat/watching", "warn/low",
                                                                "clear/recovered", "warn/low"}))
      << lines.size() << " lines printed";
}

// A webhook behind a proxy (a Slack or Discord hook from a machine whose only way out is
// https_proxy): every post goes through the proxy's CONNECT tunnel to the receiver, while the
// watch's own calls to llama-server on 127.0.0.1 go direct (http_proxy is set too: the proxy,
// which refuses all but CONNECT, sees only the receiver's tunnels).
TEST(CliWatchNotify, AWebhookGoesThroughTheProxyOfTheEnvironment) {
  const ScopedEnv ca("SSL_CERT_FILE", test_ca_file());
  NotifyFixture f;
  WebhookReceiver receiver(0ms);
  HostilePeer front(tls_front("server", receiver.listener->port()), PeerStart::at_once);
  auto proxy_log = std::make_shared<PeerLog>();
  HostilePeer proxy(connect_proxy(proxy_log));
  const std::string proxy_url = fmt::format("http://127.0.0.1:{}", proxy.port());
  const ScopedEnv https_proxy("https_proxy", proxy_url);
  const ScopedEnv http_proxy("http_proxy", proxy_url);
  const ScopedEnv no_proxy("no_proxy", "example.invalid");
  const auto lines = watch_with_notify(https_url(front) + "/hook", f.dir);
  EXPECT_EQ(received_edges(receiver), (std::vector<std::string>{"heartbeat/watching", "warn/low",
                                                                "clear/recovered", "warn/low"}))
      << lines.size() << " lines printed";
  const auto tunnels = proxy_log->lines();
  EXPECT_EQ(tunnels.size(), 4U);
  for (const auto& line : tunnels) {
    EXPECT_EQ(line, fmt::format("CONNECT 127.0.0.1:{} HTTP/1.1", front.port()));
  }
}

TEST(CliWatchNotify, AHangingReceiverDelaysNoSample) {
  NotifyFixture f;
  WebhookReceiver receiver(2500ms);  // every answer takes 2.5 s
  const auto start = std::chrono::steady_clock::now();
  const auto lines = watch_with_notify(receiver.url(), f.dir);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Samples at 0, 0.1, … 0.5 s: the edges at samples 1, 3 and 5 carry their sample's time.
  std::vector<double> edge_times;
  for (const auto& line : lines) {
    if (line.value("event", "") == "low" || line.value("event", "") == "recovered") {
      edge_times.push_back(line.value("t_s", -1.0));
    }
  }
  ASSERT_EQ(edge_times.size(), 3U);
  EXPECT_LT(edge_times[0], 0.1 + 0.25);
  EXPECT_LT(edge_times[1], 0.3 + 0.25);
  EXPECT_LT(edge_times[2], 0.5 + 0.25);
  // The watch itself ends within the sender's bounded close (5 s) and one post's timeout (3 s).
  EXPECT_LT(took, 10.0);
}

}  // namespace
}  // namespace gb10tune::testing
