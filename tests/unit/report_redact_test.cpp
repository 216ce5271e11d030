#include "gb10tune/report/report_redact.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune {
namespace {

const report::Identity kAlice{"/home/alice", "alice", "spark-alice.lan"};

TEST(ReportRedact, HomeDirectoriesBecomeTilde) {
  EXPECT_EQ(report::redact_text("/home/alice/models/q.gguf", kAlice), "~/models/q.gguf");
  EXPECT_EQ(report::redact_text("-m /home/bob/m.gguf", kAlice), "-m ~/m.gguf");
  EXPECT_EQ(report::redact_text("/Users/carol/x", kAlice), "~/x");
  EXPECT_EQ(report::redact_text("/root/llama.cpp/build", kAlice), "~/llama.cpp/build");
  EXPECT_EQ(report::redact_text("/root", kAlice), "~");
  EXPECT_EQ(report::redact_text("/rootfs/bin /opt/root/x", kAlice), "/rootfs/bin /opt/root/x");
  const report::Identity odd_home{"/srv/people/dave", "dave", ""};
  EXPECT_EQ(report::redact_text("/srv/people/dave/m.gguf", odd_home), "~/m.gguf");
}

TEST(ReportRedact, HostAndUserNamesAsWordsOnly) {
  EXPECT_EQ(report::redact_text("http://spark-alice.lan:8080", kAlice), "http://<host>:8080");
  EXPECT_EQ(report::redact_text("spark-alice says hi", kAlice), "<host> says hi");
  EXPECT_EQ(report::redact_text("spark-alice2 stays", kAlice), "spark-alice2 stays");
  EXPECT_EQ(report::redact_text("owned by alice (uid 1000)", kAlice), "owned by <user> (uid 1000)");
  EXPECT_EQ(report::redact_text("malice", kAlice), "malice");
  const report::Identity root{"/root", "root", "localhost"};
  EXPECT_EQ(report::redact_text("owned by root, localhost", root), "owned by root, localhost");
}

TEST(ReportRedact, EveryStringOfTheBundle) {
  report::ReportBundle bundle;
  bundle.state_dir = "/home/alice/.local/state/gb10tune";
  bundle.launch = report::SavedDocument{
      "launch",
      "/home/alice/.local/state/gb10tune/launch.json",
      "",
      {{"argv", {"/home/alice/llama.cpp/llama-server", "--host", "spark-alice.lan"}},
       {"nested", {{"deep", {{"path", "/home/alice/x"}}}}},
       {"count", 3}}};
  bundle.runs.push_back({"a", "/home/alice/r.json", "", {{"url", "http://spark-alice:9"}}});
  bundle.problems.push_back("/home/alice/.local/state/gb10tune/verify.json is not JSON");
  report::redact_bundle(bundle, kAlice);
  EXPECT_EQ(bundle.state_dir, "~/.local/state/gb10tune");
  EXPECT_EQ(bundle.launch->file, "~/.local/state/gb10tune/launch.json");
  EXPECT_EQ(bundle.launch->doc["argv"],
            nlohmann::json({"~/llama.cpp/llama-server", "--host", "<host>"}));
  EXPECT_EQ(bundle.launch->doc["nested"]["deep"]["path"], "~/x");
  EXPECT_EQ(bundle.launch->doc["count"], 3);
  EXPECT_EQ(bundle.runs[0].doc["url"], "http://<host>:9");
  EXPECT_EQ(bundle.problems[0], "~/.local/state/gb10tune/verify.json is not JSON");
}

}  // namespace
}  // namespace gb10tune
