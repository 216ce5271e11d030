// https through the HTTP client, on loopback with the test certificates: a trusted server answers
// (by address and by name), and each refusal says why in words: not trusted, another name,
// expired or not yet valid, not TLS at all, a handshake that never finishes (bounded by the call's
// deadline).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gb10tune/http/http_client.hpp"
#include "support/test_context.hpp"
#include "support/tls_peer.hpp"

namespace gb10tune::http {
namespace {

using namespace std::chrono_literals;
using testing::HostilePeer;
using testing::PeerStart;

// A small file served over plain HTTP, and the TLS server in front of it.
struct TlsServedFile {
  explicit TlsServedFile(const std::string& certificate)
      : backend(testing::ranged_files({{"/hello.txt", dir.write("hello.txt", "hello over tls\n")}},
                                      log)),
        front(testing::tls_front(certificate, backend.port()), PeerStart::at_once) {}
  testing::TempDir dir;
  std::shared_ptr<testing::PeerLog> log = std::make_shared<testing::PeerLog>();
  HostilePeer backend;
  HostilePeer front;
};

Url tls_url(const std::string& host, int port) {
  return Url{"https", host, port, ""};
}

// A GET of https://127.0.0.1:PORT/hello.txt with `timeout`, and the seconds it took.
std::pair<Expected<HttpResponse>, double> timed_tls_get(int port,
                                                        std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  auto answer = http_get(tls_url("127.0.0.1", port), "/hello.txt", timeout);
  return {std::move(answer),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

TEST(HttpsClient, ATrustedServerAnswersByAddressAndByName) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  TlsServedFile served("server");
  for (const char* host : {"127.0.0.1", "localhost"}) {
    const auto answer = http_get(tls_url(host, served.front.port()), "/hello.txt", 5s);
    ASSERT_TRUE(answer) << host << ": " << answer.error().message;
    EXPECT_EQ(answer->status, 200) << host;
    EXPECT_EQ(answer->body, "hello over tls\n") << host;
  }
  EXPECT_EQ(served.log->requests.load(), 2);
}

TEST(HttpsClient, AServerOutsideTheCaStoreIsNotTrusted) {
  // A store that holds another CA only (the dated certificates'), and no directory of CAs.
  testing::TempDir empty;
  const testing::ScopedEnv file("SSL_CERT_FILE", testing::dated_ca_file());
  const testing::ScopedEnv dir("SSL_CERT_DIR", empty.path().string());
  TlsServedFile served("server");
  const auto answer = http_get(tls_url("127.0.0.1", served.front.port()), "/hello.txt", 5s);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code, ExitCode::failed);
  const std::string& message = answer.error().message;
  EXPECT_TRUE(testing::contains(message, "127.0.0.1:" + std::to_string(served.front.port())))
      << message;
  EXPECT_TRUE(testing::contains(message, "certificate is not trusted")) << message;
  EXPECT_TRUE(testing::contains(message, "point SSL_CERT_FILE at that CA's certificate"))
      << message;
  EXPECT_EQ(served.log->requests.load(), 0);  // nothing was sent
}

TEST(HttpsClient, ACertificateForAnotherNameIsAMismatch) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  TlsServedFile served("other");
  for (const char* host : {"127.0.0.1", "localhost"}) {
    const auto answer = http_get(tls_url(host, served.front.port()), "/hello.txt", 5s);
    ASSERT_FALSE(answer) << host;
    EXPECT_TRUE(testing::contains(answer.error().message, "name mismatch"))
        << answer.error().message;
    EXPECT_TRUE(testing::contains(answer.error().message, fmt::format("not '{}'", host)))
        << answer.error().message;
  }
}

// Issued by a trusted CA for the right name, but outside its validity: the clock is named.
TEST(HttpsClient, ACertificateOutsideItsValidityIsExpiredOrNotYetValid) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::dated_ca_file());
  for (const auto& [certificate, words] :
       {std::pair{"expired", "the server's certificate has expired"},
        std::pair{"notyet", "the server's certificate is not valid yet"}}) {
    TlsServedFile served(certificate);
    const auto answer = http_get(tls_url("127.0.0.1", served.front.port()), "/hello.txt", 5s);
    ASSERT_FALSE(answer) << certificate;
    EXPECT_TRUE(testing::contains(answer.error().message, words)) << answer.error().message;
    EXPECT_TRUE(testing::contains(answer.error().message, "check this machine's clock"))
        << answer.error().message;
    EXPECT_EQ(served.log->requests.load(), 0);  // nothing was sent
  }
}

TEST(HttpsClient, APlainHttpServerDidNotSpeakTlsAndSaysSoAtOnce) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  HostilePeer plain(testing::answers_plain_http(), PeerStart::at_once);
  const auto [answer, took] = timed_tls_get(plain.port(), 5s);
  ASSERT_FALSE(answer);
  EXPECT_TRUE(testing::contains(answer.error().message, "the server did not speak TLS"))
      << answer.error().message;
  EXPECT_TRUE(testing::contains(answer.error().message, "http://")) << answer.error().message;
  EXPECT_LT(took, 2.0);
}

TEST(HttpsClient, AHandshakeThatNeverFinishesEndsAtTheDeadline) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  HostilePeer silent(testing::never_answers(), PeerStart::at_once);
  const auto [answer, took] = timed_tls_get(silent.port(), 800ms);
  ASSERT_FALSE(answer);
  EXPECT_TRUE(testing::contains(answer.error().message, "within 800 ms")) << answer.error().message;
  EXPECT_TRUE(testing::contains(answer.error().message, "TLS handshake did not finish in time"))
      << answer.error().message;
  EXPECT_GE(took, 0.75);
  EXPECT_LT(took, 2.0);
}

}  // namespace
}  // namespace gb10tune::http
