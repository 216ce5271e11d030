#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fake_bandwidth.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::contains;

// A copy of the captured CPU-server state under dir/state/gb10tune with alice's home directory
// and host name planted where a real state holds them, and a sysroot naming that host.
struct PlantedState {
  testing::TempDir dir;
  platform::Environment env;

  PlantedState() {
    const fs::path state = dir.path() / "state" / "gb10tune";
    fs::create_directories(state);
    fs::copy(testing::fixture("report/cpu-server"), state, fs::copy_options::recursive);
    json launch = json::parse(testing::read_text(state / "launch.json"));
    launch["model_path"] = "/home/alice/models/tiny-qwen35.gguf";
    launch["url"] = "http://spark-alice.lan:18093";
    dir.write("state/gb10tune/launch.json", launch.dump(2));
    json run = json::parse(testing::read_text(state / "bench" / "depth4.json"));
    run["server"]["model_path"] = "/home/alice/models/tiny-qwen35.gguf";
    run["url"] = "http://spark-alice:18093";
    dir.write("state/gb10tune/bench/depth4.json", run.dump(2));
    std::string verify = testing::read_text(state / "verify.json");
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"/tmp/capture/models/", "/home/alice/models/"},
          {"http://127.0.0.1:18093", "http://spark-alice.lan:18093"}}) {
      for (auto at = verify.find(from); at != std::string::npos; at = verify.find(from, at)) {
        verify.replace(at, from.size(), to);
      }
    }
    dir.write("state/gb10tune/verify.json", verify);
    dir.write("sysroot/proc/sys/kernel/hostname", "spark-alice.lan\n");
    env.set("HOME", "/home/alice");
    env.set("USER", "alice");
    env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  }

  testing::CliResult run(const std::vector<std::string>& args) const {
    return testing::run_cli_at(dir.path() / "sysroot", "no-gpu", args, env);
  }
};

TEST(CliReport, WritesTheHtmlWhereToldAndSaysWhere) {
  PlantedState planted;
  const fs::path out = planted.dir.path() / "r.html";
  const auto result = planted.run({"report", "-o", out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "report (html) written to " + out.string() + "\n");
  const std::string html = testing::read_text(out);
  EXPECT_TRUE(contains(html, "data-chart=\"memory\""));
  EXPECT_TRUE(contains(html, "data-chart=\"decode\""));
}

TEST(CliReport, LeavesOutHomeUserAndHostUnlessIncludePaths) {
  PlantedState planted;
  for (const char* format : {"html", "md", "json"}) {
    const auto result = planted.run({"report", "-o", "-", "--format", format});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(contains(result.out, "/home/alice")) << format;
    EXPECT_FALSE(contains(result.out, "spark-alice")) << format;
    EXPECT_FALSE(contains(result.out, "alice")) << format;
    EXPECT_TRUE(contains(result.out, "~/models/tiny-qwen35.gguf") ||
                contains(result.out, "tiny-qwen35.gguf"))
        << format;
  }
  const auto json_doc = planted.run({"report", "--json"});
  ASSERT_EQ(json_doc.exit_code, 0);
  const json doc = json::parse(json_doc.out);
  EXPECT_EQ(doc["launch"]["model_path"], "~/models/tiny-qwen35.gguf");
  EXPECT_EQ(doc["launch"]["url"], "http://<host>:18093");
  EXPECT_EQ(doc["runs"]["depth4"]["url"], "http://<host>:18093");

  const auto kept = planted.run({"report", "--json", "--include-paths"});
  ASSERT_EQ(kept.exit_code, 0);
  const json raw = json::parse(kept.out);
  EXPECT_EQ(raw["launch"]["model_path"], "/home/alice/models/tiny-qwen35.gguf");
  EXPECT_EQ(raw["launch"]["url"], "http://spark-alice.lan:18093");
  const auto kept_html = planted.run({"report", "-o", "-", "--include-paths"});
  EXPECT_TRUE(contains(kept_html.out, "http://spark-alice.lan:18093"));
  EXPECT_TRUE(contains(kept_html.out, "/home/alice/models/tiny-qwen35.gguf"));
}

TEST(CliReport, OutDirHoldsEveryFormat) {
  PlantedState planted;
  const fs::path out = planted.dir.path() / "shared" / "report";
  const auto result = planted.run({"report", "--out", out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* name : {"report.html", "report.md", "report.json"}) {
    EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
    EXPECT_TRUE(contains(result.out, (out / name).string())) << result.out;
  }
  EXPECT_EQ(json::parse(testing::read_text(out / "report.json"))["command"], "report");
  EXPECT_TRUE(contains(testing::read_text(out / "report.md"), "# gb10tune report"));
}

TEST(CliReport, FormatFollowsTheFilesExtension) {
  PlantedState planted;
  const fs::path md = planted.dir.path() / "post.md";
  ASSERT_EQ(planted.run({"report", "-o", md.string()}).exit_code, 0);
  EXPECT_EQ(testing::read_text(md).rfind("# gb10tune report", 0), 0u);
}

TEST(CliReport, BadInputsAreUsageErrorsNamingTheFix) {
  PlantedState planted;
  const auto both = planted.run({"report", "--out", "x", "-o", "y.html"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(contains(both.err, "give one of them")) << both.err;
  const auto nowhere = planted.run({"report", "--state", "/nonexistent/state"});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_TRUE(contains(nowhere.err, "/nonexistent/state")) << nowhere.err;
  EXPECT_TRUE(contains(nowhere.err, "gb10tune probe")) << nowhere.err;
  const auto format = planted.run({"report", "--format", "pdf"});
  EXPECT_EQ(format.exit_code, 2);
  const fs::path blocked = planted.dir.path() / "file";
  planted.dir.write("file", "");
  const auto unwritable = planted.run({"report", "-o", (blocked / "r.html").string()});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_TRUE(contains(unwritable.err, "-o FILE")) << unwritable.err;
}

// What a new user met: `-o x.pdf` wrote HTML into x.pdf without a word.
TEST(CliReport, AnExtensionItCannotWriteIsAUsageError) {
  PlantedState planted;
  const fs::path pdf = planted.dir.path() / "x.pdf";
  const auto result = planted.run({"report", "-o", pdf.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "gb10tune report: " + pdf.string() +
                ": .pdf is not a format report writes (.html, .md, .json); name the file with "
                "one of those extensions, or add --format html|md|json to write that format "
                "under this name.\n");
  EXPECT_FALSE(fs::exists(pdf));
  const auto forced = planted.run({"report", "-o", pdf.string(), "--format", "md"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(testing::read_text(pdf).rfind("# gb10tune report", 0), 0u);
}

// What a new user met: the page of a verify that found no server said only "verdict fail".
TEST(CliReport, AVerifyThatFoundNoServerShowsWhy) {
  PlantedState planted;
  planted.dir.write(
      "state/gb10tune/verify.json",
      R"({"command":"verify","error":"no llama-server is running","exit_code":1,"notes":[],)"
      R"("schema_version":1,"servers":[],"strict":false,"verdict":"fail"})");
  for (const char* format : {"html", "md"}) {
    const auto result = planted.run({"report", "-o", "-", "--format", format});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(contains(result.out, "verify found no server: no llama-server is running"))
        << format;
  }
}

TEST(CliReport, DamagedPartIsAWarningAndTheReportStillWritten) {
  PlantedState planted;
  planted.dir.write("state/gb10tune/verify.json", "{ cut off");
  const auto result = planted.run({"report", "-o", "-", "--format", "md"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.err, "verify.json is not a JSON document")) << result.err;
  EXPECT_TRUE(contains(result.out, "## Parts that could not be read"));
}

TEST(CliReport, BenchAndVerifySaveTheDocumentsReportReads) {
  testing::TempDir dir;
  platform::Environment env;
  env.set("HOME", (dir.path() / "home").string());
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  env.set("PATH", "/nonexistent");
  testing::FakeBandwidth fake;
  const bench::CaseRunner runner = [&fake](const kernels::CaseSpec& spec) { return fake(spec); };
  const fs::path state = dir.path() / "state" / "gb10tune";
  const auto sweep = testing::run_cli_on(
      "gb10", {"bench", "--sweep", "--allocators", "device", "--operations", "read"}, env, runner);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_FALSE(fs::exists(state / "bench.json"));  // a sweep is not the per-path table
  const auto bench = testing::run_cli_on("gb10", {"bench", "--json"}, env, runner);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_EQ(json::parse(testing::read_text(state / "bench.json")), json::parse(bench.out));
  const auto verify = testing::run_cli_on(
      "verify-clean",
      {"verify", "--json", "--server-help",
       testing::fixture("llama-server/help-2026-08-commit-3f545be.txt").string()},
      env);
  ASSERT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_EQ(json::parse(testing::read_text(state / "verify.json")), json::parse(verify.out));
  const auto report = testing::run_cli_on("gb10", {"report", "--json"}, env);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json doc = json::parse(report.out);
  EXPECT_EQ(doc["bench"], json::parse(bench.out));
  EXPECT_EQ(doc["verify"]["verdict"], json::parse(verify.out)["verdict"]);
}

}  // namespace
}  // namespace gb10tune
