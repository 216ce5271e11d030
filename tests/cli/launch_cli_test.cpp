#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::run_cli_on;

// The report's model on disk: 16.8 GB of (sparse) q4_K weights, one MTP block.
std::string write_report_model(const testing::TempDir& dir, const std::string& name) {
  testing::GgufWriter w = testing::report_model();
  w.tensor("blk.0.ffn_down.weight", {5120, 17408 * 12}, gguf::GgmlType::q4_k);
  const auto path = dir.path() / name;
  w.write(path);
  return path.string();
}

TEST(CliLaunch, DryRunJsonHasEveryFigureAsAnInteger) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "Qwen3.8-27B-Q4_K_M.gguf");
  const auto result = run_cli_on("gb10",
                                 {"launch", "--dry-run", "--json", "--model", model, "--slots", "3",
                                  "--ctx-per-slot", "196608", "--cache-ram", "24576"},
                                 {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["command"], "launch");
  EXPECT_EQ(doc["config"]["kv_unified"], true);  // several slots: one pool by default (K8)
  EXPECT_EQ(doc["config"]["mtp"], true);         // the model has an MTP head (K4)
  EXPECT_EQ(doc["config"]["draft_n_max"], 4);
  const json& plan = doc["plan"];
  EXPECT_EQ(plan["n_ctx"], 589824);
  EXPECT_EQ(plan["kv_full_bytes"], 38654705664ull);  // 36 GiB
  EXPECT_EQ(plan["mtp_kv_bytes"], 4096ull * 589824);
  EXPECT_EQ(plan["recurrent_rows"], 15);
  EXPECT_EQ(plan["cache_ram_bytes"], 24576ull << 20);
  EXPECT_EQ(plan["fits"], true);
  for (const char* key :
       {"weights_bytes", "kv_full_bytes", "kv_swa_bytes", "recurrent_bytes", "mtp_kv_bytes",
        "overhead_bytes", "cache_ram_bytes", "total_bytes", "available_bytes"}) {
    EXPECT_TRUE(plan[key].is_number_unsigned()) << key;
  }
  EXPECT_TRUE(plan["margin_bytes"].is_number_integer());
}

TEST(CliLaunch, PlanThatDoesNotFitExitsThreeAndSaysWhatWould) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "model with spaces.gguf");
  // 12.3 GB available, 2 GB reserved: a 262144-cell context (16 GiB of KV) cannot fit.
  const auto result = run_cli_on("no-gpu",
                                 {"launch", "--dry-run", "--model", model, "--slots", "3",
                                  "--no-kvu", "--reserve", "2GB", "--cache-ram", "0"},
                                 {});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.out.find("DOES NOT FIT"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("What fits: 3 slot(s) of "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("KV, full attention"), std::string::npos);
  EXPECT_NE(result.out.find("MTP draft context KV"), std::string::npos);
}

TEST(CliLaunch, NothingFitsSaysWhatToChange) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  // 12.3 GB available minus the default 12 GB reserve: nothing is left.
  const auto result = run_cli_on("no-gpu", {"launch", "--dry-run", "--model", model}, {});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.out.find("Nothing fits with these settings"), std::string::npos) << result.out;
}

TEST(CliLaunch, BadInputIsAUsageErrorNamingTheThing) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::string truncated = dir.write("t.gguf", "GGUF\x03\x00\x00\x00\x01").string();
  for (const Case& c : {
           Case{{"launch", "--model", model}, "add --dry-run"},
           Case{{"launch", "--dry-run", "--model", "/nonexistent/x.gguf"}, "/nonexistent/x.gguf"},
           Case{{"launch", "--dry-run", "--model", truncated}, "t.gguf"},
           Case{{"launch", "--dry-run", "--model", model, "--cache-type-k", "q4_K"}, "q4_K"},
           Case{{"launch", "--dry-run", "--model", model, "--ctx-size", "4096", "--ctx-per-slot",
                 "4096"},
                "not both"},
           Case{{"launch", "--dry-run", "--model", model, "--reserve", "lots"}, "--reserve"},
       }) {
    const auto result = run_cli_on("gb10", c.args, {});
    EXPECT_EQ(result.exit_code, 2) << c.expect << ": " << result.err;
    EXPECT_NE(result.err.find(c.expect), std::string::npos) << result.err;
  }
}

TEST(CliLaunch, MtpOnAModelWithoutTheHeadIsRefused) {
  testing::TempDir dir;
  const auto path = dir.path() / "plain.gguf";
  testing::report_model(64, 0).write(path);
  const auto result =
      run_cli_on("gb10", {"launch", "--dry-run", "--model", path.string(), "--mtp"}, {});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("no MTP head"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace gb10tune
