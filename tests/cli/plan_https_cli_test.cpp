// gb10tune plan over https on loopback (a TLS server with the test CA in front of the ranged
// file server): the same plan as the local file to the byte, under 1% of the file read, also
// through an HTTPS_PROXY's tunnel; without the CA the trust error, exit 1, nothing written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/tls_peer.hpp"

namespace gb10tune {
namespace {

using json = nlohmann::json;

// The report model served over https at /org/m.gguf, and a home of its own for each run.
struct HttpsPlanFixture {
  HttpsPlanFixture()
      : backend(testing::ranged_files({{"/org/m.gguf", write_model()}}, log)),
        front(testing::tls_front("server", backend.port()), testing::PeerStart::at_once) {
    env.set("HOME", home.path().string());
    env.set("PATH", "/usr/bin:/bin");
  }

  std::filesystem::path write_model() const {
    testing::large_report_model().write(dir.path() / "m.gguf");
    return dir.path() / "m.gguf";
  }

  testing::CliResult plan(const std::string& model) const {
    return testing::run_cli_on("gb10", {"plan", model, "--machine", "gb10", "--json"}, env);
  }

  std::string url() const { return testing::https_url(front) + "/org/m.gguf"; }

  testing::TempDir home;
  testing::TempDir dir;
  platform::Environment env;
  std::shared_ptr<testing::PeerLog> log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer backend;
  testing::HostilePeer front;
};

TEST(CliPlanHttps, TheSamePlanAsTheLocalFileReadingUnderOnePercent) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  HttpsPlanFixture f;
  const auto local = f.plan((f.dir.path() / "m.gguf").string());
  const auto remote = f.plan(f.url());
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  const json l = json::parse(local.out);
  const json r = json::parse(remote.out);
  EXPECT_EQ(r["plan"].dump(), l["plan"].dump());
  const auto size = r["model"]["size"].get<std::uint64_t>();
  EXPECT_EQ(size, std::filesystem::file_size(f.dir.path() / "m.gguf"));
  EXPECT_LT(r["model"]["bytes_read"].get<std::uint64_t>(), size / 100);
  EXPECT_LT(f.log->body_bytes.load(), size / 100);
}

TEST(CliPlanHttps, ThroughAnHttpsProxyTheSamePlan) {
  const testing::ScopedEnv ca("SSL_CERT_FILE", testing::test_ca_file());
  HttpsPlanFixture f;
  auto proxy_log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer proxy(testing::connect_proxy(proxy_log));
  const auto local = f.plan((f.dir.path() / "m.gguf").string());
  f.env.set("https_proxy", fmt::format("http://127.0.0.1:{}", proxy.port()));
  const auto tunneled = f.plan(f.url());
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(tunneled.exit_code, 0) << tunneled.err;
  EXPECT_EQ(json::parse(tunneled.out)["plan"].dump(), json::parse(local.out)["plan"].dump());
  ASSERT_FALSE(proxy_log->lines().empty());
  for (const auto& line : proxy_log->lines()) {
    EXPECT_EQ(line, fmt::format("CONNECT 127.0.0.1:{} HTTP/1.1", f.front.port()));
  }
}

TEST(CliPlanHttps, WithoutTheCaTheServerIsNotTrustedAndNothingIsWritten) {
  // A store that holds another CA only (the dated certificates'), and no directory of CAs.
  testing::TempDir empty;
  const testing::ScopedEnv file("SSL_CERT_FILE", testing::dated_ca_file());
  const testing::ScopedEnv dir("SSL_CERT_DIR", empty.path().string());
  HttpsPlanFixture f;
  const auto r = f.plan(f.url());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(testing::contains(r.err, f.url())) << r.err;
  EXPECT_TRUE(testing::contains(r.err, "certificate is not trusted")) << r.err;
  EXPECT_TRUE(testing::contains(r.err, "SSL_CERT_FILE")) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(f.home.path()));
  EXPECT_EQ(f.log->requests.load(), 0);
}

}  // namespace
}  // namespace gb10tune
