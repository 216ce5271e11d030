#include "gb10tune/http/remote_file.hpp"

#include <gtest/gtest.h>

#include "gb10tune/launch/plan_model.hpp"
#include "support/gguf_writer.hpp"
#include "support/range_peer.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/tls_peer.hpp"

namespace gb10tune::http {
namespace {

using namespace std::chrono_literals;
using testing::HostilePeer;
using testing::PeerLog;
using testing::PeerStart;

// Bounds for a test: a few seconds in all, one second a request.
RemoteOptions quick_remote_options() {
  RemoteOptions o;
  o.limits.deadline = std::chrono::steady_clock::now() + 10s;
  o.limits.per_request = 1s;
  return o;
}

// The 27B-shaped report model (150k-token vocabulary, 18 GB of sparse data) at dir/name.
std::filesystem::path write_report_27b(const testing::TempDir& dir, const std::string& name) {
  const auto path = dir.path() / name;
  testing::large_report_model().write(path);
  return path;
}

TEST(RemoteFile, ReadsTheHeaderWithRangesAndMatchesTheLocalFile) {
  testing::TempDir dir;
  const auto path = write_report_27b(dir, "q27.gguf");
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::ranged_files({{"/models/q27.gguf", path}}, log));
  auto remote = RemoteFile::open(peer.url() + "/models/q27.gguf", quick_remote_options());
  ASSERT_TRUE(remote) << remote.error().message;
  EXPECT_EQ(remote->size(), std::filesystem::file_size(path));
  EXPECT_EQ(remote->validator(), "\"v1\"");
  auto header = gguf::read_gguf(*remote, remote->url());
  ASSERT_TRUE(header) << header.error().message;
  const auto local = gguf::read_gguf(path);
  ASSERT_TRUE(local);
  EXPECT_EQ(header->data_offset(), local->data_offset());
  EXPECT_EQ(header->file_size(), local->file_size());
  EXPECT_EQ(header->tensor_bytes(), local->tensor_bytes());
  EXPECT_FALSE(header->header_only());
  // Under 1% of the file, and no more than twice the header.
  EXPECT_LT(log->body_bytes.load(), remote->size() / 100);
  EXPECT_LE(remote->fetched(), 2 * local->data_offset() + (2u << 20));
  for (const std::string& line : log->lines()) {
    EXPECT_TRUE(line.starts_with("GET /models/q27.gguf HTTP/1.1")) << line;
  }
}

TEST(RemoteFile, AServerThatIgnoresRangeIsStoppedAtOnce) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::ignores_ranges(std::uint64_t{70} << 30, log));
  const auto start = std::chrono::steady_clock::now();
  auto remote = RemoteFile::open(peer.url() + "/big.gguf", quick_remote_options());
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message, "ignores Range requests"))
      << remote.error().message;
  EXPECT_TRUE(testing::contains(remote.error().message, "75161927680 bytes"));
  EXPECT_EQ(remote.error().code, ExitCode::failed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_LT(log->body_bytes.load(), std::uint64_t{64} << 20);
}

// What a new user met: `python3 -m http.server`, the first server one tries, answers every
// request 200 with the whole file; a small file was refused although it is smaller than the
// first range asked for. A file within RemoteLimits::whole_file_bytes is read whole.
TEST(RemoteFile, ASmallFileFromAServerWithoutRangeIsReadWhole) {
  testing::TempDir dir;
  const auto path = dir.path() / "tiny.gguf";
  testing::tiny_qwen35_model().write(path);
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::whole_files({{"/tiny.gguf", path}}, log));
  auto remote = RemoteFile::open(peer.url() + "/tiny.gguf", quick_remote_options());
  ASSERT_TRUE(remote) << remote.error().message;
  EXPECT_TRUE(remote->whole_file());
  EXPECT_EQ(remote->size(), std::filesystem::file_size(path));
  EXPECT_EQ(remote->fetched(), remote->size());
  auto header = gguf::read_gguf(*remote, remote->url());
  ASSERT_TRUE(header) << header.error().message;
  const auto local = gguf::read_gguf(path);
  ASSERT_TRUE(local);
  EXPECT_EQ(header->data_offset(), local->data_offset());
  EXPECT_EQ(header->tensor_bytes(), local->tensor_bytes());
  EXPECT_EQ(log->lines().size(), 1u);  // one request: nothing asked again
}

// Above the bound the answer is refused at once, as before, naming the bound.
TEST(RemoteFile, ALargerFileFromAServerWithoutRangeIsRefused) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::ignores_ranges(std::uint64_t{17} << 20, log));
  auto remote = RemoteFile::open(peer.url() + "/big.gguf", quick_remote_options());
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message,
                                "ignores Range requests: asked for 2097152 bytes, it began "
                                "sending the whole file (17825792 bytes), more than the 16.0 MiB "
                                "gb10tune reads whole"))
      << remote.error().message;
}

TEST(RemoteFile, ADrippingServerEndsAtTheRequestDeadline) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::drips_ranges(std::uint64_t{1} << 30, 200ms, log));
  RemoteOptions options = quick_remote_options();
  options.limits.per_request = 500ms;
  const auto start = std::chrono::steady_clock::now();
  auto remote = RemoteFile::open(peer.url() + "/slow.gguf", options);
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message, "within 500 ms")) << remote.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(RemoteFile, TheWholeReadHasOneDeadline) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::drips_ranges(std::uint64_t{1} << 30, 200ms, log));
  RemoteOptions options = quick_remote_options();
  options.limits.deadline = std::chrono::steady_clock::now() + 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto remote = RemoteFile::open(peer.url() + "/slow.gguf", options);
  ASSERT_FALSE(remote);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(RemoteFile, NotFoundNamesTheUrl) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::ranged_files({}, log));
  auto remote = RemoteFile::open(peer.url() + "/none.gguf", quick_remote_options());
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message, "/none.gguf answered HTTP 404 (not found"))
      << remote.error().message;
}

TEST(RemoteFile, ARedirectLoopIsNamed) {
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(
      testing::redirects({{"/a.gguf", "/b.gguf"}, {"/b.gguf", "a.gguf"}}, log));
  auto remote = RemoteFile::open(peer.url() + "/a.gguf", quick_remote_options());
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message,
                                "the redirects loop: " + peer.url() + "/a.gguf was reached twice"))
      << remote.error().message;
  EXPECT_EQ(log->requests.load(), 2);
}

TEST(RemoteFile, TooManyRedirectsAreRefused) {
  auto log = std::make_shared<PeerLog>();
  std::map<std::string, std::string> moves;
  for (int i = 0; i < 10; ++i) {
    moves[fmt::format("/m{}.gguf", i)] = fmt::format("/m{}.gguf", i + 1);
  }
  testing::HostilePeer peer(testing::redirects(moves, log));
  RemoteOptions options = quick_remote_options();
  options.limits.max_redirects = 3;
  auto remote = RemoteFile::open(peer.url() + "/m0.gguf", options);
  ASSERT_FALSE(remote);
  EXPECT_TRUE(testing::contains(remote.error().message, "more than 3 redirects"))
      << remote.error().message;
  EXPECT_EQ(log->requests.load(), 4);
}

TEST(RemoteFile, AHostileStringLengthFailsWithinTheByteBound) {
  // One string of 200 MiB announced in a 1 GiB file: the reader may fetch only 4 MiB.
  testing::TempDir dir;
  testing::GgufWriter w;
  w.add("general.architecture", testing::gguf_string("llama"));
  std::string bytes = w.layout().header;
  const auto at = w.layout().key_offsets.at("general.architecture") + 8 + 20 + 4;
  testing::patch_u64(bytes, at, std::uint64_t{200} << 20);
  const auto path = dir.write("hostile.gguf", bytes);
  std::filesystem::resize_file(path, std::uint64_t{1} << 30);
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer peer(testing::ranged_files({{"/h.gguf", path}}, log));
  RemoteOptions options = quick_remote_options();
  options.limits.max_bytes = std::uint64_t{4} << 20;
  auto remote = RemoteFile::open(peer.url() + "/h.gguf", options);
  ASSERT_TRUE(remote) << remote.error().message;
  auto header = gguf::read_gguf(*remote, "h.gguf");
  ASSERT_FALSE(header);
  EXPECT_TRUE(
      testing::contains(header.error().message, "runs past the 4.0 MiB this read may fetch"))
      << header.error().message;
  EXPECT_LE(remote->fetched(), options.limits.max_bytes);
}

TEST(RemoteFile, OtherSchemesAreUsageErrors) {
  auto ftp = RemoteFile::open("ftp://host/m.gguf", quick_remote_options());
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ExitCode::usage);
}

TEST(RemoteFile, GoesThroughTheProxyOfTheEnvironmentUnlessNoProxySaysOtherwise) {
  testing::TempDir dir;
  const auto path = dir.write("m.gguf", testing::llama_header(2, 4096, 64, 4, 2).bytes());
  auto log = std::make_shared<PeerLog>();
  testing::HostilePeer proxy(testing::ranged_files({{"/m.gguf", path}}, log));
  RemoteOptions options = quick_remote_options();
  options.env.set("http_proxy", proxy.url());
  // Port 1 of the loopback: nothing listens there, only the proxy can answer.
  auto remote = RemoteFile::open("http://127.0.0.1:1/m.gguf", options);
  ASSERT_TRUE(remote) << remote.error().message;
  ASSERT_FALSE(log->lines().empty());
  EXPECT_EQ(log->lines().front(), "GET http://127.0.0.1:1/m.gguf HTTP/1.1");
  // no_proxy: the host is reached directly, and the connection is refused.
  options.env.set("no_proxy", "localhost, 127.0.0.1");
  auto direct = RemoteFile::open("http://127.0.0.1:1/m.gguf", options);
  ASSERT_FALSE(direct);
  EXPECT_TRUE(testing::contains(direct.error().message, "no answer from http://127.0.0.1:1/m.gguf"))
      << direct.error().message;
  EXPECT_EQ(log->requests.load(), 1);
  // A domain suffix matches the hosts under it.
  options.env.set("no_proxy", ".example");
  EXPECT_TRUE(RemoteFile::open("http://127.0.0.1:1/m.gguf", options));
  EXPECT_EQ(log->requests.load(), 2);
}

TEST(RemoteFile, SplitShardUrlsFollowLlamaCppNames) {
  const auto urls =
      launch::split_shard_urls("http://h:1/m/big-00001-of-00003.gguf?download=true", 3);
  ASSERT_TRUE(urls) << urls.error().message;
  EXPECT_EQ(*urls,
            (std::vector<std::string>{"http://h:1/m/big-00001-of-00003.gguf?download=true",
                                      "http://h:1/m/big-00002-of-00003.gguf?download=true",
                                      "http://h:1/m/big-00003-of-00003.gguf?download=true"}));
  EXPECT_FALSE(launch::split_shard_urls("http://h:1/m/big.gguf", 3));
}

// A small model served over https at /m.gguf (127.0.0.1 and localhost both match the cert).
struct HttpsModel {
  HttpsModel()
      : backend(testing::ranged_files(
            {{"/m.gguf", dir.write("m.gguf", testing::llama_header(2, 4096, 64, 4, 2).bytes())}},
            log)),
        front(testing::tls_front("server", backend.port()), PeerStart::at_once) {}
  testing::ScopedEnv ca{"SSL_CERT_FILE", testing::test_ca_file()};
  testing::TempDir dir;
  std::shared_ptr<PeerLog> log = std::make_shared<PeerLog>();
  HostilePeer backend;
  HostilePeer front;
};

TEST(RemoteFileHttps, GoesThroughTheHttpsProxysTunnelUnlessNoProxyNamesTheHost) {
  HttpsModel model;
  auto proxy_log = std::make_shared<PeerLog>();
  HostilePeer proxy(testing::connect_proxy(proxy_log));
  RemoteOptions options = quick_remote_options();
  options.env.set("HTTPS_PROXY", fmt::format("127.0.0.1:{}", proxy.port()));
  options.env.set("http_proxy", "http://127.0.0.1:1");  // not for https
  const std::string url = testing::https_url(model.front) + "/m.gguf";
  auto remote = RemoteFile::open(url, options);
  ASSERT_TRUE(remote) << remote.error().message;
  EXPECT_EQ(remote->size(), std::filesystem::file_size(model.dir.path() / "m.gguf"));
  ASSERT_EQ(proxy_log->lines().size(), 1u);
  EXPECT_EQ(proxy_log->lines().front(),
            fmt::format("CONNECT 127.0.0.1:{} HTTP/1.1", model.front.port()));
  // Inside the tunnel the server sees an ordinary origin-form request.
  ASSERT_FALSE(model.log->lines().empty());
  EXPECT_TRUE(model.log->lines().front().starts_with("GET /m.gguf HTTP/1.1"))
      << model.log->lines().front();
  options.env.set("NO_PROXY", "127.0.0.1");
  auto direct = RemoteFile::open(url, options);
  ASSERT_TRUE(direct) << direct.error().message;
  EXPECT_EQ(proxy_log->requests.load(), 1);
}

// Opens https://127.0.0.1:PORT/a.gguf, which redirects to `target`.
Expected<RemoteFile> open_redirected_to(const std::string& target) {
  auto log = std::make_shared<PeerLog>();
  HostilePeer moves(testing::redirects({{"/a.gguf", target}}, log));
  HostilePeer front(testing::tls_front("server", moves.port()), PeerStart::at_once);
  return RemoteFile::open(testing::https_url(front) + "/a.gguf", quick_remote_options());
}

TEST(RemoteFileHttps, FollowsARedirectToAnotherHttpsHost) {
  HttpsModel model;
  const std::string target = fmt::format("https://localhost:{}/m.gguf", model.front.port());
  auto remote = open_redirected_to(target);
  ASSERT_TRUE(remote) << remote.error().message;
  EXPECT_EQ(remote->url(), target);
  EXPECT_EQ(remote->size(), std::filesystem::file_size(model.dir.path() / "m.gguf"));
}

TEST(RemoteFileHttps, ARedirectFromHttpsToHttpIsRefused) {
  HttpsModel model;
  const std::string target = fmt::format("http://127.0.0.1:{}/m.gguf", model.backend.port());
  auto remote = open_redirected_to(target);
  ASSERT_FALSE(remote);
  EXPECT_EQ(remote.error().code, ExitCode::failed);
  EXPECT_TRUE(testing::contains(remote.error().message, "drops TLS (https to http)"))
      << remote.error().message;
  EXPECT_TRUE(testing::contains(remote.error().message, target)) << remote.error().message;
  EXPECT_EQ(model.log->requests.load(), 0);  // the plain URL was never asked
}

}  // namespace
}  // namespace gb10tune::http
