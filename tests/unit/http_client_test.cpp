#include "gb10tune/http/http_client.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "support/hostile_peer.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"

namespace gb10tune::http {
namespace {

using namespace std::chrono_literals;

// A socket on 127.0.0.1 that listens (so connects succeed) but never answers.
class SilentListener {
 public:
  SilentListener() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(m_fd, 8) != 0 ||
        ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    m_port = ntohs(addr.sin_port);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  ~SilentListener() { ::close(m_fd); }
  int fd() const { return m_fd; }
  int port() const { return m_port; }

 private:
  int m_fd = -1;
  int m_port = 0;
};

TEST(HttpClientUrl, ParsesHostPortAndBase) {
  const auto url = parse_url("http://127.0.0.1:8080");
  ASSERT_TRUE(url) << url.error().message;
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->base_path, "");
  EXPECT_EQ(url->to_string(), "http://127.0.0.1:8080");

  const auto based = parse_url("http://spark.local:9931/llama/");
  ASSERT_TRUE(based) << based.error().message;
  EXPECT_EQ(based->host, "spark.local");
  EXPECT_EQ(based->port, 9931);
  EXPECT_EQ(based->base_path, "/llama");
  EXPECT_EQ(based->to_string(), "http://spark.local:9931/llama");
}

TEST(HttpClientUrl, DefaultsAndIpv6) {
  const auto no_port = parse_url("http://localhost");
  ASSERT_TRUE(no_port);
  EXPECT_EQ(no_port->port, 80);
  const auto bare = parse_url("127.0.0.1:8081");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->port, 8081);
  const auto v6 = parse_url("http://[::1]:8080/");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 8080);
  EXPECT_EQ(v6->to_string(), "http://[::1]:8080");
}

TEST(HttpClientUrl, HttpsDefaultsToPort443AndJunkIsRejected) {
  const auto https = parse_url("https://hooks.example.com/services/T0/B0");
  ASSERT_TRUE(https) << https.error().message;
  EXPECT_EQ(https->scheme, "https");
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->to_string(), "https://hooks.example.com:443/services/T0/B0");
  const auto plain = parse_url("http://hooks.example.com/x");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->scheme, "http");
  for (const char* bad :
       {"", "http://", "http://:8080", "http://host:", "http://host:0", "http://host:65536",
        "http://host:80x", "ftp://host", "http://[::1", "http://[::1]x"}) {
    const auto url = parse_url(bad);
    EXPECT_FALSE(url) << bad;
    if (!url) {
      EXPECT_NE(url.error().message.find("bad server URL"), std::string::npos) << bad;
    }
  }
}

TEST(HttpClient, ConnectionRefusedNamesTheAddress) {
  const int port = testing::free_tcp_port();
  const Url url{"http", "127.0.0.1", port, ""};
  const auto response = http_get(url, "/health", 2s);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  const std::string& message = response.error().message;
  EXPECT_NE(
      message.find("connection refused: nothing listens on 127.0.0.1:" + std::to_string(port)),
      std::string::npos)
      << message;
  EXPECT_NE(message.find(url.to_string() + "/health"), std::string::npos) << message;
}

TEST(HttpClient, SilentServerTimesOut) {
  SilentListener silent;
  const Url url{"http", "127.0.0.1", silent.port(), ""};
  const auto started = std::chrono::steady_clock::now();
  const auto response = http_get(url, "/health", 1s);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("within 1 s"), std::string::npos)
      << response.error().message;
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 5s);

  const auto post = http_post_json(url, "/completion", "{}", 300ms);
  ASSERT_FALSE(post);
  EXPECT_NE(post.error().message.find("within 300 ms"), std::string::npos) << post.error().message;
}

TEST(HttpClient, ServerThatHangsUpIsNotATimeout) {
  SilentListener listener;
  std::thread closer([&listener] {
    const int client = ::accept(listener.fd(), nullptr, nullptr);
    if (client >= 0) {
      ::close(client);
    }
  });
  const Url url{"http", "127.0.0.1", listener.port(), ""};
  const auto response = http_get(url, "/props", 5s);
  closer.join();
  ASSERT_FALSE(response);
  // Depending on who is first, the hang-up is seen while sending or while reading: either
  // way it is reported as such, never as a timeout.
  const auto& message = response.error().message;
  EXPECT_TRUE(message.find("closed the connection") != std::string::npos ||
              message.find("broke while sending") != std::string::npos)
      << message;
  EXPECT_EQ(message.find("within"), std::string::npos) << message;
}

Url peer_url(const testing::HostilePeer& peer) {
  return Url{"http", "127.0.0.1", peer.port(), ""};
}

// One call of the client to a peer at `url`.
using PeerCall = std::function<Expected<HttpResponse>(const Url& url)>;

PeerCall get_within_one_second(const std::string& path) {
  return [path](const Url& url) { return http_get(url, path, 1s); };
}

// Runs `call` against a peer that runs `script`: it must fail at its 1 s deadline (well within
// 3 s), saying that no complete answer came from `path` within 1 s.
void expect_cut_at_one_second(testing::PeerScript script, const PeerCall& call,
                              const std::string& path) {
  testing::HostilePeer peer(std::move(script));
  const auto started = std::chrono::steady_clock::now();
  const auto response = call(peer_url(peer));
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(response);
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 3s);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  EXPECT_NE(
      response.error().message.find("no complete answer from " + peer.url() + path + " within 1 s"),
      std::string::npos)
      << response.error().message;
}

// GETs `path` from a peer that runs `script`, with 10 s: the answer must be refused at the
// 16 MiB cap, long before it ends.
void expect_refused_at_the_cap(testing::PeerScript script, const std::string& path) {
  testing::HostilePeer peer(std::move(script));
  const auto response = http_get(peer_url(peer), path, 10s);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  EXPECT_NE(
      response.error().message.find("the answer from " + peer.url() + path + " exceeded 16 MiB"),
      std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, AnAnswerDrippedOneByteEvery800MsEndsAtTheDeadline) {
  // Every read gets a byte well within a per-read timeout; only a whole-call deadline ends
  // this. The peer gives up after ~26 s, so a client without one fails the bound.
  expect_cut_at_one_second(
      [](testing::PeerConnection& c) {
        c.drip("HTTP/1.1 200 OK\r\nX-Slow: abcdefgh", std::chrono::milliseconds(800));
      },
      get_within_one_second("/health"), "/health");
}

TEST(HttpClientBounds, ABodyDrippedAfterGoodHeadersEndsAtTheDeadline) {
  expect_cut_at_one_second(
      [](testing::PeerConnection& c) {
        if (c.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                   "Content-Length: 40\r\n\r\n")) {
          c.drip("{\"status\":\"ok\"}", std::chrono::milliseconds(800));
        }
      },
      [](const Url& url) { return http_post_json(url, "/v1/chat/completions", "{}", 1s); },
      "/v1/chat/completions");
}

TEST(HttpClientBounds, AnEndlessSlowChunkedStreamEndsAtTheDeadline) {
  expect_cut_at_one_second(
      [](testing::PeerConnection& c) {
        if (!c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
          return;
        }
        for (int i = 0; i < 40 && c.send("1\r\na\r\n"); ++i) {
          std::this_thread::sleep_for(300ms);
        }
      },
      get_within_one_second("/slots"), "/slots");
}

TEST(HttpClientBounds, APeerThatNeverAnswersEndsAtTheDeadline) {
  expect_cut_at_one_second([](testing::PeerConnection& c) { c.wait_for_close(); },
                           get_within_one_second("/health"), "/health");
}

// A peer that sends `head`, then 64 Ki copies of `filler` (64 MiB of 1 KiB fillers) as fast
// as the client takes them.
testing::PeerScript flood(std::string head, std::string filler) {
  return [head = std::move(head), filler = std::move(filler)](testing::PeerConnection& c) {
    if (c.send(head)) {
      c.send_repeated(filler, 64 * 1024);
    }
  };
}

TEST(HttpClientBounds, AHugeBodyIsRefusedAtTheSizeCap) {
  // 64 MiB announced and sent: far over what any llama-server answer needs.
  expect_refused_at_the_cap(
      flood("HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n", std::string(1024, 'x')),
      "/props");
}

TEST(HttpClientBounds, AnUnannouncedHugeBodyIsRefusedAtTheSizeCap) {
  // No Content-Length: the body runs to the end of the connection.
  expect_refused_at_the_cap(
      flood("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", std::string(1024, 'x')), "/props");
}

TEST(HttpClientBounds, HugeHeadersAreRefusedAtTheSizeCap) {
  // Header lines without end: none is long, together they are 64 MiB. libcurl has its own
  // bound on headers (300 KB in current versions), below the 16 MiB cap: either refuses them.
  testing::HostilePeer peer(
      flood("HTTP/1.1 200 OK\r\n", "X-Padding: " + std::string(1000, 'p') + "\r\n"));
  const auto response = http_get(peer_url(peer), "/health", 10s);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  const std::string& message = response.error().message;
  EXPECT_NE(message.find("the answer from " + peer.url() + "/health "), std::string::npos)
      << message;
  EXPECT_TRUE(message.find("exceeded 16 MiB") != std::string::npos ||
              message.find("has headers too large") != std::string::npos)
      << message;
  // Within the small cap, the tool's own bound comes first.
  testing::HostilePeer small(
      flood("HTTP/1.1 200 OK\r\n", "X-Padding: " + std::string(1000, 'p') + "\r\n"));
  const auto capped = http_get(peer_url(small), "/health", 10s, kSmallAnswerBytes);
  ASSERT_FALSE(capped);
  EXPECT_NE(capped.error().message.find("exceeded 64 KiB"), std::string::npos)
      << capped.error().message;
}

TEST(HttpClientBounds, AnEndlessFastChunkedStreamIsRefusedAtTheSizeCap) {
  expect_refused_at_the_cap(flood("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                                  "400\r\n" + std::string(1024, 'c') + "\r\n"),
                            "/slots");
}

TEST(HttpClientBounds, HealthAnswersAreCappedSmaller) {
  // A /health answer is a line: launch, verify and bench read it with a 64 KiB cap.
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")) {
      c.send(std::string(100000, 'h'));
    }
  });
  const auto response = http_get(peer_url(peer), "/health", 5s, kSmallAnswerBytes);
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("exceeded 64 KiB"), std::string::npos)
      << response.error().message;
}

TEST(HttpClient, AnAnswerThatIsNotHttpIsNamedAsSuch) {
  // Another program on the port (an SSH server, a raw TCP service) answers in its own words.
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    c.send("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\nProtocol mismatch.\r\n");
  });
  const auto response = http_get(peer_url(peer), "/health", 5s);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  const std::string& message = response.error().message;
  EXPECT_NE(message.find("the answer from " + peer.url() + "/health is not HTTP"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("is it llama-server that listens there?"), std::string::npos) << message;
}

TEST(HttpClient, AnAnswerCutShortIsNamedAsSuch) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    c.send("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"status\":");
  });
  const auto response = http_get(peer_url(peer), "/props", 5s);
  ASSERT_FALSE(response);
  const std::string& message = response.error().message;
  EXPECT_NE(message.find("the answer from " + peer.url() + "/props ended early"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("within"), std::string::npos) << message;
}

TEST(HttpClient, ReadsAChunkedAnswerInFull) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    c.send(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
        "\r\n\r\n7\r\n{\"a\": 1\r\n1\r\n}\r\n0\r\n\r\n");
    c.wait_for_close();
  });
  const auto response = http_get(peer_url(peer), "/props", 5s);
  ASSERT_TRUE(response) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->content_type, "application/json");
  EXPECT_EQ(response->body, "{\"a\": 1}");
}

TEST(HttpClient, SendsARequestLlamaServerAccepts) {
  std::string seen;
  {
    testing::HostilePeer peer([&seen](testing::PeerConnection& c) {
      seen = c.request();
      c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    });
    const Url url{"http", "127.0.0.1", peer.port(), "/base"};
    const auto response = http_post_json(url, "/v1/chat/completions", "{\"x\":1}", 5s);
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->body, "{}");
  }
  EXPECT_EQ(seen.rfind("POST /base/v1/chat/completions HTTP/1.1\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\r\nContent-Length: 7\r\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\r\nUser-Agent: gb10tune/"), std::string::npos) << seen;
  // The body follows at once: no "Expect: 100-continue" wait.
  EXPECT_EQ(seen.find("Expect:"), std::string::npos) << seen;
}

TEST(HttpClientProxy, ARequestWithProxiesGoesThroughTheProxyWithItsCredentials) {
  std::string seen;
  {
    testing::HostilePeer proxy([&seen](testing::PeerConnection& c) {
      seen = c.request();
      c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    HttpRequest request;
    // TEST-NET-1: no route; only the proxy can answer.
    request.url = "http://192.0.2.1:8080/hook";
    request.body = "{}";
    request.timeout = 5s;
    request.proxies = platform::Environment();
    request.proxies->set("http_proxy",
                         fmt::format("http://user:secret@127.0.0.1:{}", proxy.port()));
    request.proxies->set("NO_PROXY", "localhost");
    const auto reply = http_request(request);
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->response.body, "ok");
  }
  EXPECT_EQ(seen.rfind("POST http://192.0.2.1:8080/hook HTTP/1.1\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("\r\nProxy-Authorization: Basic dXNlcjpzZWNyZXQ=\r\n"), std::string::npos)
      << seen;
}

TEST(HttpClientProxy, NoProxyAndServerCallsGoDirect) {
  testing::HostilePeer server(
      [](testing::PeerConnection& c) { c.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"); });
  // Port 1 of the loopback: nothing listens there, a call through this proxy would fail.
  const testing::ScopedEnv http_proxy("http_proxy", "http://127.0.0.1:1");
  const testing::ScopedEnv all_proxy("ALL_PROXY", "http://127.0.0.1:1");
  // llama-server's calls never use a proxy, whatever the process's environment says.
  const auto direct = http_get(peer_url(server), "/health", 5s);
  ASSERT_TRUE(direct) << direct.error().message;
  EXPECT_EQ(direct->body, "{}");
  // A call with proxies goes direct to the hosts no_proxy names.
  HttpRequest request;
  request.url = server.url() + "/health";
  request.timeout = 5s;
  request.proxies = platform::Environment();
  request.proxies->set("http_proxy", "http://127.0.0.1:1");
  request.proxies->set("no_proxy", "example.com, 127.0.0.1");
  const auto listed = http_request(request);
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->response.status, 200);
  // Not listed: through the proxy, which is not there, and the message names it.
  request.proxies->set("no_proxy", "example.com");
  const auto proxied = http_request(request);
  ASSERT_FALSE(proxied);
  EXPECT_NE(proxied.error().message.find("cannot connect to the proxy http://127.0.0.1:1 (from "
                                         "http_proxy)"),
            std::string::npos)
      << proxied.error().message;
}

}  // namespace
}  // namespace gb10tune::http
