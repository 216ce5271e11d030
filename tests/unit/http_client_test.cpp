#include "gb10tune/platform/http_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "support/hostile_peer.hpp"
#include "support/stand_in.hpp"

namespace gb10tune::platform {
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

TEST(HttpClientUrl, RejectsHttpsAndJunk) {
  const auto https = parse_url("https://127.0.0.1:8080");
  ASSERT_FALSE(https);
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  EXPECT_EQ(https.error().code, ExitCode::usage);
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
  EXPECT_NE(response.error().message.find("timed out after 1 s"), std::string::npos)
      << response.error().message;
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 5s);

  const auto post = http_post_json(url, "/completion", "{}", 300ms);
  ASSERT_FALSE(post);
  EXPECT_NE(post.error().message.find("timed out after 300 ms"), std::string::npos)
      << post.error().message;
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
  EXPECT_EQ(message.find("timed out"), std::string::npos) << message;
}

// How long `call` took, and what it returned.
template <class Call>
auto timed(Call call, std::chrono::steady_clock::duration& elapsed) {
  const auto started = std::chrono::steady_clock::now();
  auto result = call();
  elapsed = std::chrono::steady_clock::now() - started;
  return result;
}

Url peer_url(const testing::HostilePeer& peer) {
  return Url{"http", "127.0.0.1", peer.port(), ""};
}

TEST(HttpClientBounds, AnAnswerDrippedOneByteEvery800MsEndsAtTheDeadline) {
  // Every read gets a byte well within the per-read timeout; only a whole-call deadline ends
  // this. The peer gives up after ~12 s, so a client without one fails the bound below.
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    c.drip("HTTP/1.1 200 OK\r\nX-Slow: abcdefgh", std::chrono::milliseconds(800));
  });
  std::chrono::steady_clock::duration elapsed{};
  const auto response = timed([&] { return http_get(peer_url(peer), "/health", 1s); }, elapsed);
  ASSERT_FALSE(response);
  EXPECT_LT(elapsed, 3s);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  const std::string& message = response.error().message;
  EXPECT_NE(message.find("no complete answer from " + peer.url() + "/health within 1 s"),
            std::string::npos)
      << message;
}

TEST(HttpClientBounds, ABodyDrippedAfterGoodHeadersEndsAtTheDeadline) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n")) {
      c.drip("{\"status\":\"ok\"}", std::chrono::milliseconds(800));
    }
  });
  std::chrono::steady_clock::duration elapsed{};
  const auto response = timed(
      [&] { return http_post_json(peer_url(peer), "/v1/chat/completions", "{}", 1s); }, elapsed);
  ASSERT_FALSE(response);
  EXPECT_LT(elapsed, 3s);
  EXPECT_NE(response.error().message.find("within 1 s"), std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, AnEndlessSlowChunkedStreamEndsAtTheDeadline) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (!c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
      return;
    }
    for (int i = 0; i < 40; ++i) {
      if (!c.send("1\r\na\r\n")) {
        return;
      }
      std::this_thread::sleep_for(300ms);
    }
  });
  std::chrono::steady_clock::duration elapsed{};
  const auto response = timed([&] { return http_get(peer_url(peer), "/slots", 1s); }, elapsed);
  ASSERT_FALSE(response);
  EXPECT_LT(elapsed, 3s);
  EXPECT_NE(response.error().message.find("within 1 s"), std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, AHugeBodyIsRefusedAtTheSizeCap) {
  // 64 MiB announced and sent: far over what any llama-server answer needs.
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n")) {
      c.send_repeated(std::string(1024, 'x'), 64 * 1024);
    }
  });
  const auto response = http_get(peer_url(peer), "/props", 10s);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code, ExitCode::failed);
  EXPECT_NE(
      response.error().message.find("the answer from " + peer.url() + "/props exceeded 16 MiB"),
      std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, AnUnannouncedHugeBodyIsRefusedAtTheSizeCap) {
  // No Content-Length: the body runs to the end of the connection.
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")) {
      c.send_repeated(std::string(1024, 'x'), 64 * 1024);
    }
  });
  const auto response = http_get(peer_url(peer), "/props", 10s);
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("exceeded 16 MiB"), std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, HugeHeadersAreRefusedAtTheSizeCap) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\n")) {
      c.send_repeated("X-Padding: " + std::string(1000, 'p') + "\r\n", 64 * 1024);
      c.send("Content-Length: 2\r\n\r\n{}");
    }
  });
  const auto response = http_get(peer_url(peer), "/health", 10s);
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("exceeded"), std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, AnEndlessFastChunkedStreamIsRefusedAtTheSizeCap) {
  testing::HostilePeer peer([](testing::PeerConnection& c) {
    if (c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
      c.send_repeated("400\r\n" + std::string(1024, 'c') + "\r\n", 64 * 1024);
    }
  });
  const auto response = http_get(peer_url(peer), "/slots", 10s);
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("exceeded 16 MiB"), std::string::npos)
      << response.error().message;
}

TEST(HttpClientBounds, APeerThatNeverAnswersEndsAtTheDeadline) {
  testing::HostilePeer peer([](testing::PeerConnection& c) { c.wait_for_close(); });
  std::chrono::steady_clock::duration elapsed{};
  const auto response = timed([&] { return http_get(peer_url(peer), "/health", 1s); }, elapsed);
  ASSERT_FALSE(response);
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 3s);
  EXPECT_NE(response.error().message.find("within 1 s"), std::string::npos)
      << response.error().message;
}

}  // namespace
}  // namespace gb10tune::platform
