#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gb10tune/http/http_client.hpp"
#include "gb10tune/platform/process.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"
#include "support/fake_bandwidth.hpp"
#include "support/stand_in.hpp"
#include "support/systemd_unit_reader.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
// Runs `gb10tune launch …` in-process with the stand-in as the llama-server binary.
testing::CliResult run_with_stand_in(const std::string& scenario, std::vector<std::string> args,
                                     const platform::Environment& env) {
  args.insert(args.begin() + 1, {"--llama-server", testing::stand_in_server_path().string()});
  return testing::run_cli_on(scenario, args, env);
}

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
  const auto result =
      run_with_stand_in("gb10",
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
  for (const char* key : {"weights_bytes", "kv_full_bytes", "kv_swa_bytes", "recurrent_bytes",
                          "mtp_kv_bytes", "compute_bytes", "output_bytes", "runtime_bytes",
                          "overhead_bytes", "cache_ram_bytes", "total_bytes", "available_bytes"}) {
    EXPECT_TRUE(plan[key].is_number_unsigned()) << key;
  }
  // The stand-in llama-server carries no CUDA backend: CPU, one compute buffer per context.
  EXPECT_EQ(doc["config"]["backend"], "cpu");
  EXPECT_FALSE(doc["config"]["backend_reason"].get<std::string>().empty());
  EXPECT_GT(plan["buffers"]["main"]["compute_host_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(plan["buffers"]["main"]["compute_device_bytes"], 0);
  EXPECT_GT(plan["buffers"]["mtp"]["compute_host_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(plan["runtime_device_bytes"], 0);
  EXPECT_EQ(plan["overhead_bytes"], 32ull << 20);  // the default margin
  EXPECT_TRUE(plan["margin_bytes"].is_number_integer());
}

// An architecture without layer rules: refused with the reason and the way on; --force alone is
// not enough; --force --overhead plans an estimate that says so and leaves the caches unknown.
TEST(CliLaunch, UnsupportedArchitectureNeedsForceAndOverheadAndIsOnlyAnEstimate) {
  testing::TempDir dir;
  testing::GgufWriter w;
  w.add("general.architecture", testing::gguf_string("rwkv7"))
      .add("rwkv7.context_length", testing::gguf_uint32(4096))
      .add("rwkv7.embedding_length", testing::gguf_uint32(2048))
      .add("rwkv7.block_count", testing::gguf_uint32(24))
      .tensor("token_embd.weight", {2048, 65536}, gguf::GgmlType::f16);
  const auto path = (dir.path() / "rwkv7.gguf").string();
  w.write(path);

  auto result = run_with_stand_in("no-gpu", {"launch", "--dry-run", "--model", path}, {});
  EXPECT_EQ(result.exit_code, 2) << result.err << result.out;
  EXPECT_NE(result.err.find("architecture 'rwkv7' is not supported: recurrent only"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("--force --overhead SIZE"), std::string::npos) << result.err;

  result = run_with_stand_in("no-gpu", {"launch", "--dry-run", "--model", path, "--force"}, {});
  EXPECT_EQ(result.exit_code, 2) << result.err << result.out;
  EXPECT_NE(result.err.find("also give --overhead SIZE"), std::string::npos) << result.err;

  result = run_with_stand_in("no-gpu",
                             {"launch", "--dry-run", "--json", "--model", path, "--force",
                              "--overhead", "3GiB", "--slots", "1", "--cache-ram", "0"},
                             {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  const json& plan = doc["plan"];
  EXPECT_EQ(plan["estimate"], true);
  EXPECT_EQ(plan["weights_bytes"], 2048ull * 65536 * 2);
  EXPECT_EQ(plan["overhead_bytes"], 3ull << 30);
  for (const char* key : {"kv_full_bytes", "recurrent_bytes", "compute_bytes", "output_bytes"}) {
    EXPECT_TRUE(plan[key].is_null()) << key << " must be unknown, not " << plan[key];
  }
  EXPECT_EQ(plan["total_bytes"].get<std::uint64_t>(),
            plan["weights_bytes"].get<std::uint64_t>() + (3ull << 30) +
                plan["runtime_bytes"].get<std::uint64_t>());
  EXPECT_EQ(doc["model"]["supported"], false);

  result = run_with_stand_in("no-gpu",
                             {"launch", "--dry-run", "--model", path, "--force", "--overhead",
                              "3GiB", "--slots", "1", "--cache-ram", "0"},
                             {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  EXPECT_NE(result.out.find("ESTIMATE, not a plan"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("unknown"), std::string::npos) << result.out;
}

TEST(CliLaunch, PlanThatDoesNotFitExitsThreeAndSaysWhatWould) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "model with spaces.gguf");
  // 12.3 GB available, 2 GB reserved: a 262144-cell context (16 GiB of KV) cannot fit.
  const auto result =
      run_with_stand_in("no-gpu",
                        {"launch", "--dry-run", "--model", model, "--slots", "3", "--no-kvu",
                         "--reserve", "2GB", "--cache-ram", "0", "--no-fit"},
                        {});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.out.find("DOES NOT FIT"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("What fits: 3 slot(s) of "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("KV, full attention"), std::string::npos);
  EXPECT_NE(result.out.find("MTP draft context KV"), std::string::npos);
}

// The same plan without --no-fit: the context per slot (from the profile) gives way, the
// command line's slots and prompt cache stay.
TEST(CliLaunch, PlanThatDoesNotFitIsFittedWhereTheCommandLineLeftRoom) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto result =
      run_with_stand_in("no-gpu",
                        {"launch", "--dry-run", "--json", "--model", model, "--slots", "3",
                         "--no-kvu", "--reserve", "2GB", "--cache-ram", "0"},
                        {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["plan"]["fits"], true);
  EXPECT_LE(doc["plan"]["total_bytes"].get<std::uint64_t>(),
            doc["plan"]["available_bytes"].get<std::uint64_t>());
  ASSERT_EQ(doc["fit"]["given_up"].size(), 1u) << doc["fit"].dump();
  const json& change = doc["fit"]["given_up"][0];
  EXPECT_EQ(change["setting"], "ctx_per_slot");
  EXPECT_EQ(change["asked"], 196608);
  EXPECT_EQ(change["asked_from"], "profile gb10-dense-mtp");
  const auto chosen = change["chosen"].get<std::uint64_t>();
  EXPECT_LT(chosen, 196608u);
  EXPECT_EQ(chosen % 256, 0u);
  EXPECT_EQ(doc["config"]["slots"], 3);
  EXPECT_EQ(doc["config"]["ctx_total"], chosen * 3);
  EXPECT_EQ(doc["settings"]["ctx_per_slot"]["source"], "fit (memory)");
  // 256 cells more per slot would not fit.
  const auto more = run_with_stand_in(
      "no-gpu",
      {"launch", "--dry-run", "--json", "--model", model, "--slots", "3", "--no-kvu", "--reserve",
       "2GB", "--cache-ram", "0", "--no-fit", "--ctx-per-slot", std::to_string(chosen + 256)},
      {});
  EXPECT_EQ(more.exit_code, 3) << more.out;
  // --force keeps the asked settings, unfitted.
  const auto forced =
      run_with_stand_in("no-gpu",
                        {"launch", "--dry-run", "--json", "--model", model, "--slots", "3",
                         "--no-kvu", "--reserve", "2GB", "--cache-ram", "0", "--force"},
                        {});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(json::parse(forced.out)["plan"]["fits"], false);
  EXPECT_TRUE(json::parse(forced.out)["fit"].is_null());
}

TEST(CliLaunch, FitLowersCommandLineValuesOnlyWhenAsked) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const std::vector<std::string> args = {
      "launch",    "--dry-run", "--model",     model, "--slots",        "3",     "--no-kvu",
      "--reserve", "2GB",       "--cache-ram", "0",   "--ctx-per-slot", "196608"};
  const auto kept = run_with_stand_in("no-gpu", args, {});
  EXPECT_EQ(kept.exit_code, 3) << kept.out;
  EXPECT_NE(kept.out.find("DOES NOT FIT"), std::string::npos) << kept.out;
  EXPECT_NE(kept.out.find("the fit may not lower ctx_per_slot, slots, cache_ram_mib"),
            std::string::npos)
      << kept.out;
  auto fit_args = args;
  fit_args.push_back("--fit");
  const auto fitted = run_with_stand_in("no-gpu", fit_args, {});
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err << fitted.out;
  EXPECT_NE(fitted.out.find("to fit, gave up"), std::string::npos) << fitted.out;
  EXPECT_NE(fitted.out.find("ctx_per_slot 196608 → "), std::string::npos) << fitted.out;
  EXPECT_NE(fitted.out.find("(was from command line)"), std::string::npos) << fitted.out;
  EXPECT_EQ(fitted.out.find("DOES NOT FIT"), std::string::npos) << fitted.out;
}

TEST(CliLaunch, FitPriorityComesFromTheProfileAndIsChecked) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto profile = dir.write("p.json",
                                 R"({"settings": {"slots": 3, "ctx_per_slot": 196608,
                                     "kv_unified": "off", "cache_ram_mib": 0,
                                     "fit_priority": ["slots", "ctx_per_slot"]}})");
  const auto result = run_with_stand_in("no-gpu",
                                        {"launch", "--dry-run", "--json", "--model", model,
                                         "--profile", profile.string(), "--reserve", "2GB"},
                                        {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["fit"]["priority"], json({"slots", "ctx_per_slot"}));
  EXPECT_EQ(doc["config"]["slots"], 3);  // slots first: kept
  EXPECT_EQ(doc["fit"]["given_up"][0]["setting"], "ctx_per_slot");

  const auto bad = dir.write("bad.json", R"({"settings": {"fit_priority": ["ctx", "slots"]}})");
  const auto refused = run_with_stand_in(
      "no-gpu", {"launch", "--dry-run", "--model", model, "--profile", bad.string()}, {});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("fit_priority"), std::string::npos) << refused.err;
}

TEST(CliLaunch, NothingFitsSaysWhatToChange) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  // 12.3 GB available minus the default 12 GB reserve: nothing is left.
  const auto result = run_with_stand_in("no-gpu", {"launch", "--dry-run", "--model", model}, {});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.out.find("Nothing fits with these settings"), std::string::npos) << result.out;
  // The fit tried and says why it could not.
  EXPECT_NE(result.out.find("nothing fits: even 256 cells per slot"), std::string::npos)
      << result.out;
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
           Case{{"launch", "--dry-run", "--model", model, "--profile", "nope"}, "gb10-moe"},
           Case{{"launch", "--dry-run", "--model", model, "stray"}, "go after --"},
           Case{{"launch", "--dry-run", "--model", model, "--", "--no-such-flag"},
                "--no-such-flag"},
           Case{{"launch", "--dry-run", "--model", model, "--", "-c", "4096"}, "overrides"},
           Case{{"launch", "--dry-run", "--model", model, "--", "--draft-max", "4"},
                "has been removed"},
           Case{{"launch", "--dry-run", "--model", model, "--", "-bs"}, "K6"},
           // Memory options the command leaves at llama.cpp's default: the plan would not know.
           Case{{"launch", "--dry-run", "--model", model, "--", "-ctk", "q8_0"},
                "extra argument -ctk changes the K cache type, which the memory plan takes from "
                "launch's own --cache-type-k"},
           Case{{"launch", "--dry-run", "--model", model, "--", "--ubatch-size=1024"},
                "launch's own --ubatch"},
           Case{{"launch", "--dry-run", "--model", model, "--", "-b", "4096"},
                "the plan assumes llama-server's default 2048"},
           Case{{"launch", "--dry-run", "--model", model, "--", "-ot", "exps=CPU"},
                "changes where tensors are placed, which the memory plan does not follow"},
           Case{{"launch", "--dry-run", "--model", model, "--", "-nkvo"},
                "where the KV cache lives"},
           Case{{"launch", "--dry-run", "--model", "/nonexistent/x.gguf"}, "/nonexistent/x.gguf"},
           Case{{"launch", "--dry-run", "--model", truncated}, "t.gguf"},
           Case{{"launch", "--dry-run", "--model", model, "--cache-type-k", "q4_K"}, "q4_K"},
           Case{{"launch", "--dry-run", "--model", model, "--ctx-size", "4096", "--ctx-per-slot",
                 "4096"},
                "not both"},
           Case{{"launch", "--dry-run", "--model", model, "--reserve", "lots"}, "--reserve"},
       }) {
    const auto result = run_with_stand_in("gb10", c.args, {});
    EXPECT_EQ(result.exit_code, 2) << c.expect << ": " << result.err;
    EXPECT_NE(result.err.find(c.expect), std::string::npos) << result.err;
  }
}

TEST(CliLaunch, ForceGoesOnWithAnUnplannedMemoryOptionAsAWarning) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto result = run_with_stand_in(
      "gb10", {"launch", "--dry-run", "--force", "--model", model, "--", "-ot", "exps=CPU"}, {});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("extra argument -ot changes where tensors are placed"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("(going on: --force)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("-ot exps=CPU"), std::string::npos) << result.out;
}

TEST(CliLaunch, CommandLineValuesAreCheckedLikeProfileValues) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  struct Case {
    std::vector<std::string> options;
    std::vector<std::string> expect;
  };
  for (const Case& c : {
           Case{{"--ctx-per-slot", "-5"}, {"--ctx-per-slot", "between 0 and 16777216", "-5"}},
           Case{{"--ctx-per-slot", "99999999999"},
                {"--ctx-per-slot", "between 0 and 16777216", "99999999999"}},
           Case{{"--gpu-layers", "banana"},
                {"--gpu-layers", "'all' or a whole number from 0 to 65535", "banana"}},
           Case{{"--cache-ram", "-2"}, {"--cache-ram", "between -1 and"}},
           Case{{"-c", "-1"}, {"--ctx-size -1", "must be 0"}},
           Case{{"-c", "2", "--slots", "3"}, {"--ctx-size 2", "from 3 to"}},
       }) {
    std::vector<std::string> args{"launch", "--dry-run", "--model", model};
    args.insert(args.end(), c.options.begin(), c.options.end());
    const auto result = run_with_stand_in("gb10", args, {});
    EXPECT_EQ(result.exit_code, 2) << c.options[0] << " " << c.options[1] << ": " << result.err;
    for (const std::string& text : c.expect) {
      EXPECT_NE(result.err.find(text), std::string::npos) << text << " in: " << result.err;
    }
  }
}

TEST(CliLaunch, ProfileGpuLayersMustBeAllOrANumber) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const std::string profile =
      dir.write("p.json", R"({"settings": {"gpu_layers": "banana"}})").string();
  const auto result = run_with_stand_in(
      "gb10", {"launch", "--dry-run", "--model", model, "--profile", profile}, {});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("'gpu_layers' must be 'all' or a whole number"), std::string::npos)
      << result.err;
}

TEST(CliLaunch, CtxSizeZeroIsTheNativeContextPerSlot) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto result = run_with_stand_in(
      "gb10", {"launch", "--dry-run", "--json", "--model", model, "--slots", "1", "-c", "0"}, {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["plan"]["ctx_per_slot"], 262144);  // not the profile's 196608
}

// A plain llama model (no recurrent state): 8 layers, 8 KV heads of 128 → 2 × 8 × 8 × 128 × 2
// bytes = 32 KiB of f16 KV per cell.
std::string write_llama_model(const testing::TempDir& dir) {
  testing::GgufWriter w;
  w.add("general.architecture", testing::gguf_string("llama"))
      .add("llama.block_count", testing::gguf_uint32(8))
      .add("llama.context_length", testing::gguf_uint32(32768))
      .add("llama.embedding_length", testing::gguf_uint32(4096))
      .add("llama.attention.head_count", testing::gguf_uint32(32))
      .add("llama.attention.head_count_kv", testing::gguf_uint32(8));
  w.tensor("token_embd.weight", {4096, 1000}, gguf::GgmlType::f16)
      .tensor("output.weight", {4096, 1000}, gguf::GgmlType::f16);
  const auto path = dir.path() / "llama.gguf";
  w.write(path);
  return path.string();
}

TEST(CliLaunch, UnlimitedPromptCacheIsPlannedAtItsLargest) {
  testing::TempDir dir;
  const std::string model = write_llama_model(dir);
  const auto result =
      run_with_stand_in("gb10",
                        {"launch", "--dry-run", "--json", "--model", model, "--slots", "2",
                         "--ctx-per-slot", "4096", "--cache-ram", "-1"},
                        {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  // llama-server keeps at most n_ctx tokens of saved state: 8192 cells × 32 KiB.
  EXPECT_EQ(doc["plan"]["n_ctx"], 8192);
  EXPECT_EQ(doc["plan"]["cache_ram_bytes"], 8192ull * 32768);
  EXPECT_NE(doc["plan"]["notes"].dump().find("--cache-ram -1"), std::string::npos)
      << doc["plan"]["notes"].dump();
}

TEST(CliLaunch, UnlimitedPromptCacheOfARecurrentModelIsRefusedOnGb10) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto gb10 =
      run_with_stand_in("gb10", {"launch", "--dry-run", "--model", model, "--cache-ram", "-1"}, {});
  EXPECT_EQ(gb10.exit_code, 2) << gb10.err;
  EXPECT_NE(gb10.err.find("--cache-ram -1 (no limit)"), std::string::npos) << gb10.err;
  EXPECT_NE(gb10.err.find("recurrent"), std::string::npos) << gb10.err;

  const auto other =
      run_with_stand_in("x86-discrete",
                        {"launch", "--dry-run", "--json", "--model", model, "--slots", "1",
                         "--ctx-per-slot", "4096", "--cache-ram", "-1"},
                        {});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const json doc = json::parse(other.out);
  EXPECT_GT(doc["plan"]["cache_ram_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_NE(doc["plan"]["notes"].dump().find("everything left"), std::string::npos)
      << doc["plan"]["notes"].dump();
}

// A CPU build on an AVX2 machine: the plan asks the build for its CPU features and plans the
// repacked copy of the q4_0 matrices as a row of its own; -nr after -- turns it off; a build
// that prints no system_info line is planned with this CPU's features, said to be assumed.
TEST(CliLaunch, DryRunPlansTheCpuRepackOfQuantizedWeights) {
  testing::TempDir dir;
  const auto model = dir.path() / "q4.gguf";
  testing::quantized_llama(gguf::GgmlType::q4_0, 2).write(model);
  const std::vector<std::string> args = {
      "launch",  "--dry-run", "--model",        model.string(), "--reserve",   "0",
      "--slots", "1",         "--ctx-per-slot", "4096",         "--cache-ram", "0"};
  {
    testing::ScopedEnv line(
        "STANDIN_SYSTEM_INFO",
        "system_info: n_threads = 2 | CPU : SSE3 = 1 | AVX2 = 1 | REPACK = 1 |");
    const auto result = run_with_stand_in("no-gpu", args, {});
    ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
    EXPECT_NE(result.out.find("CPU_REPACK: q4_0 x14"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("the build's CPU features (the build's system_info line)"),
              std::string::npos)
        << result.out;
    auto without = args;
    without.insert(without.end(), {"--", "-nr"});
    const auto off = run_with_stand_in("no-gpu", without, {});
    ASSERT_EQ(off.exit_code, 0) << off.err << off.out;
    EXPECT_EQ(off.out.find("CPU repack"), std::string::npos) << off.out;
  }
  testing::ScopedEnv none("STANDIN_SYSTEM_INFO", "no features here");
  const auto assumed = run_with_stand_in("no-gpu", args, {});
  ASSERT_EQ(assumed.exit_code, 0) << assumed.err << assumed.out;
  EXPECT_NE(assumed.out.find("CPU repack (assumed)"), std::string::npos) << assumed.out;
  EXPECT_NE(assumed.out.find("i5-8500"), std::string::npos) << assumed.out;
}

TEST(CliLaunch, SplitModelIsPlannedWithEveryShard) {
  testing::TempDir dir;
  // Shard 1: the metadata and the token embedding; shard 2: a big main-stack tensor and the MTP
  // block, which is not loaded with --no-mtp.
  testing::GgufWriter first = testing::report_model();
  first.add("split.no", testing::gguf_uint16(0)).add("split.count", testing::gguf_uint16(2));
  first.tensor("token_embd.weight", {5120, 1000}, gguf::GgmlType::q8_0);
  first.write(dir.path() / "Q-00001-of-00002.gguf");
  testing::GgufWriter second;
  second.add("split.no", testing::gguf_uint16(1)).add("split.count", testing::gguf_uint16(2));
  second.tensor("blk.0.ffn_down.weight", {5120, 17408 * 12}, gguf::GgmlType::q4_k)
      .tensor("blk.64.attn_q.weight", {5120, 5120}, gguf::GgmlType::q8_0);
  second.write(dir.path() / "Q-00002-of-00002.gguf");
  const std::uint64_t embedding = 5120ull * 1000 / 32 * 34;
  const std::uint64_t ffn = 5120ull * 17408 * 12 / 256 * 144;

  const std::string path = (dir.path() / "Q-00001-of-00002.gguf").string();
  const auto result =
      run_with_stand_in("gb10", {"launch", "--dry-run", "--json", "--model", path, "--no-mtp"}, {});
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 3) << result.err;
  const json doc = json::parse(result.out);
  // Every shard, no MTP block. The stand-in's build (ARM, i8mm: its system_info line) repacks
  // the q4_K matrix, whose original, alone in shard 2 once the MTP block is not loaded, is
  // unmapped after the load, and the tied output layer's copy of the q8_0 token embedding.
  EXPECT_EQ(doc["plan"]["weights_bytes"], embedding);
  EXPECT_EQ(doc["plan"]["repack_bytes"], ffn + embedding);
  EXPECT_EQ(doc["plan"]["repack"]["evidence"], "build");

  // The same first shard under another name: its header still says 2 shards.
  std::filesystem::rename(dir.path() / "Q-00001-of-00002.gguf", dir.path() / "Q.gguf");
  const auto renamed = run_with_stand_in(
      "gb10", {"launch", "--dry-run", "--model", (dir.path() / "Q.gguf").string()}, {});
  EXPECT_EQ(renamed.exit_code, 2) << renamed.err;
  EXPECT_NE(renamed.err.find("Q.gguf: the header says it is the first of 2 shards"),
            std::string::npos)
      << renamed.err;
  EXPECT_NE(renamed.err.find("-00001-of-00002.gguf"), std::string::npos) << renamed.err;
}

TEST(CliLaunch, NothingFitsIsSaidTheSameOnStdoutAndStderr) {
  testing::TempDir dir;
  const std::string model = write_report_model(dir, "m.gguf");
  const auto result = run_with_stand_in("no-gpu", {"launch", "--dry-run", "--model", model}, {});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.out.find("Nothing fits with these settings"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("Nothing fits with these settings"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("says what would fit"), std::string::npos) << result.err;
}

TEST(CliLaunch, MtpOnAModelWithoutTheHeadIsRefused) {
  testing::TempDir dir;
  const auto path = dir.path() / "plain.gguf";
  testing::report_model(64, 0).write(path);
  const auto result =
      run_with_stand_in("gb10", {"launch", "--dry-run", "--model", path.string(), "--mtp"}, {});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("no MTP head"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace gb10tune

namespace gb10tune {
namespace {

using nlohmann::json;

const std::vector<std::string> kK9 = {"-ngl",
                                      "99",
                                      "-c",
                                      "589824",
                                      "-np",
                                      "3",
                                      "-fa",
                                      "on",
                                      "--spec-type",
                                      "draft-mtp",
                                      "--spec-draft-n-max",
                                      "4",
                                      "-kvu",
                                      "--cache-ram",
                                      "24576",
                                      "--jinja",
                                      "--host",
                                      "127.0.0.1",
                                      "--port",
                                      "8080"};

// The report's model in a models folder, with a projector beside it.
struct ModelsFolder {
  testing::TempDir dir;
  std::string model;
  std::string mmproj;
  // The model at `name` under dir (folders in `name` created), the projector in dir.
  explicit ModelsFolder(const std::string& name = "Qwen3.8-27B 'Q4_K_M' $x.gguf") {
    testing::GgufWriter w = testing::report_model();
    w.tensor("blk.0.ffn_down.weight", {5120, 17408 * 12}, gguf::GgmlType::q4_k);
    model = (dir.path() / name).string();
    std::filesystem::create_directories(std::filesystem::path(model).parent_path());
    w.write(model);
    testing::GgufWriter p;
    p.add("general.architecture", testing::gguf_string("clip"));
    p.tensor("v.patch_embd.weight", {1024, 1024}, gguf::GgmlType::f16);
    mmproj = (dir.path() / "mmproj-Qwen3.8-27B-f16.gguf").string();
    p.write(mmproj);
  }
};

std::vector<std::string> k9_argv(const ModelsFolder& f) {
  std::vector<std::string> argv{testing::stand_in_server_path().string(), "-m", f.model};
  argv.insert(argv.end(), kK9.begin(), kK9.end());
  argv.insert(argv.end(), {"--mmproj", f.mmproj});
  return argv;
}

TEST(CliLaunchCommand, DenseMtpProfileGivesExactlyTheTunedArgv) {
  ModelsFolder f;
  const auto result = testing::run_cli_on(
      "gb10",
      {"launch", "--dry-run", "--json", "--profile", "gb10-dense-mtp", "--models-dir",
       f.dir.path().string(), "--llama-server", testing::stand_in_server_path().string()},
      {});
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["command_line"]["argv"].get<std::vector<std::string>>(), k9_argv(f));
  EXPECT_EQ(doc["profile"]["name"], "gb10-dense-mtp");
  EXPECT_EQ(doc["settings"]["slots"]["source"], "profile gb10-dense-mtp");
  EXPECT_EQ(doc["settings"]["port"]["value"], 8080);
}

TEST(CliLaunchCommand, PrintedCommandRunsTheSameArgvInBash) {
  ModelsFolder f;  // the model's name holds a space, quotes and a dollar sign
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--models-dir", f.dir.path().string(),
                           "--llama-server", testing::stand_in_server_path().string()},
                          {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto at = result.out.rfind("command\n");
  ASSERT_NE(at, std::string::npos) << result.out;
  auto command = result.out.substr(at + 8);
  command.pop_back();  // the final newline
  const auto echoed =
      platform::run_capture({"bash", "-c", "printf '%s\\n' " + command}, std::chrono::seconds(10));
  ASSERT_TRUE(echoed);
  std::string expected;
  for (const auto& word : k9_argv(f)) {
    expected += word + "\n";
  }
  EXPECT_EQ(echoed->output, expected);
}

TEST(CliLaunchCommand, ModelsFolderWithSeveralModelsListsThem) {
  ModelsFolder f;
  testing::report_model(64, 0).write(f.dir.path() / "other.gguf");
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--models-dir", f.dir.path().string(),
                           "--llama-server", testing::stand_in_server_path().string()},
                          {});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("2 models in"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("other.gguf"), std::string::npos);
  EXPECT_NE(result.err.find("--model FILE"), std::string::npos);
}

TEST(CliLaunchCommand, SettingsLayersAndTheirSources) {
  ModelsFolder f;
  testing::TempDir home;
  home.write("config/gb10tune/config.json",
             R"({"profile": "single-slot", "settings": {"port": 9000, "slots": 2}})");
  platform::Environment env;
  env.set("XDG_CONFIG_HOME", (home.path() / "config").string());
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--json", "--model", f.model, "--slots", "1",
                           "--llama-server", testing::stand_in_server_path().string()},
                          env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["profile"]["name"], "single-slot");
  EXPECT_EQ(doc["profile"]["reason"], "user config");
  EXPECT_EQ(doc["settings"]["ctx_per_slot"]["source"], "profile single-slot");
  EXPECT_EQ(doc["settings"]["port"]["value"], 9000);
  EXPECT_NE(doc["settings"]["port"]["source"].get<std::string>().find("user config"),
            std::string::npos);
  EXPECT_EQ(doc["settings"]["slots"]["source"], "command line");
  EXPECT_EQ(doc["settings"]["slots"]["overridden"].size(), 3u);  // built-in, profile, user

  home.write("config/gb10tune/config.json", "{\n  \"settings\": {\"port\": 80,}\n}\n");
  const auto broken = testing::run_cli_on("gb10", {"launch", "--dry-run", "--model", f.model}, env);
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("config.json:2:"), std::string::npos) << broken.err;
}

// A model trained to 32,768 tokens under the default profile (196,608 per slot): each slot is
// planned at 32,768, the cap said in one line, as llama-server would cap it after allocating.
TEST(CliLaunchCommand, TheContextPerSlotIsCappedAtTheTrainingContext) {
  testing::TempDir dir;
  const auto model = (dir.path() / "m.gguf").string();
  testing::tiny_qwen35_model(true, 32768).write(model);
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--json", "--model", model, "--llama-server",
                           testing::stand_in_server_path().string()},
                          {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["settings"]["ctx_per_slot"]["value"], 196608) << doc["settings"].dump();
  EXPECT_EQ(doc["context_capped"],
            "context per slot 196608 → 32768: the model was trained to 32768 tokens and "
            "llama-server caps a slot there, so the cells past it would never be used");
  const auto& argv = doc["command_line"]["argv"];
  const auto c = std::find(argv.begin(), argv.end(), "-c");
  const auto np = std::find(argv.begin(), argv.end(), "-np");
  ASSERT_NE(c, argv.end());
  ASSERT_NE(np, argv.end());
  EXPECT_EQ(std::stoull((c + 1)->get<std::string>()),
            32768ull * std::stoull((np + 1)->get<std::string>()));
}

// The dry run shows the decode ceiling by depth, from 0 to the context it plans per slot, once a
// saved probe says the machine's bandwidth; before that its document says how to get one.
TEST(CliLaunchCommand, DryRunShowsTheCeilingByDepthOnceAProbeIsSaved) {
  ModelsFolder f;
  testing::TempDir state;
  platform::Environment env;
  env.set("XDG_STATE_HOME", state.path().string());
  const std::vector<std::string> args = {"launch",
                                         "--dry-run",
                                         "--json",
                                         "--model",
                                         f.model,
                                         "--slots",
                                         "1",
                                         "--ctx-per-slot",
                                         "65536",
                                         "--llama-server",
                                         testing::stand_in_server_path().string()};
  const auto before = testing::run_cli_on("gb10", args, env);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const json unknown = json::parse(before.out)["decode_ceiling"];
  EXPECT_EQ(unknown["available"], false) << unknown.dump();
  EXPECT_NE(unknown["missing"].get<std::string>().find("probe --quick-bench"), std::string::npos);
  EXPECT_TRUE(unknown["at_depth"]["rows"].empty());

  testing::FakeBandwidth fake;
  const auto probe =
      testing::run_cli_on("gb10", {"probe", "--quick-bench"}, env,
                          [&fake](const kernels::CaseSpec& spec) { return fake(spec); });
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const auto after = testing::run_cli_on("gb10", args, env);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  const json c = json::parse(after.out)["decode_ceiling"];
  ASSERT_EQ(c["available"], true) << c.dump();
  const json& rows = c["at_depth"]["rows"];
  ASSERT_EQ(rows.size(), 6u) << c.dump();  // 0, 4096, 8192, 16384, 32768, 65536
  EXPECT_EQ(rows[0]["depth"], 0);
  EXPECT_EQ(rows[5]["depth"], 65536);
  EXPECT_GT(rows[0]["tps"].get<double>(), rows[5]["tps"].get<double>());
  // The report's model: 16 attention layers of 4 KV heads x 256, K and V f16, per token of depth.
  EXPECT_EQ(
      rows[5]["cache_bytes"].get<std::uint64_t>() - rows[0]["cache_bytes"].get<std::uint64_t>(),
      16ull * 2 * 1024 * 2 * 65536);
  auto text_args = args;
  text_args.erase(std::find(text_args.begin(), text_args.end(), "--json"));
  const auto text = testing::run_cli_on("gb10", text_args, env);
  EXPECT_NE(text.out.find("decode ceiling by depth"), std::string::npos) << text.out;
}

// launch --dry-run --json for `model` with the stand-in's --help and `env` on the gb10 sysroot;
// null (and a failure) when it does not exit 0.
json dry_run_json_with_env(const std::string& model, const platform::Environment& env) {
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--json", "--model", model, "--llama-server",
                           testing::stand_in_server_path().string()},
                          env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.exit_code == 0 ? json::parse(result.out) : json();
}

TEST(CliLaunchCommand, EnvironmentIsCleanedAndSaysSo) {
  ModelsFolder f;
  platform::Environment env;
  env.set("GGML_CUDA_ENABLE_UNIFIED_MEMORY", "0");
  env.set("LLAMA_ARG_CTX_SIZE", "4096");
  env.set("LLAMA_ARG_BACKEND_SAMPLING", "1");
  env.set("LLAMA_ARG_THREADS", "8");
  const json doc = dry_run_json_with_env(f.model, env);
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["environment"]["removed"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"GGML_CUDA_ENABLE_UNIFIED_MEMORY",
                                      "LLAMA_ARG_BACKEND_SAMPLING", "LLAMA_ARG_CTX_SIZE"}));
  bool threads_applies = false;
  for (const auto& change : doc["environment"]["changes"]) {
    threads_applies |= change["name"] == "LLAMA_ARG_THREADS" && change["action"] == "applies";
  }
  EXPECT_TRUE(threads_applies) << doc["environment"].dump(2);
}

TEST(CliLaunchCommand, ConfigIniThatBreaksARuleIsRefused) {
  ModelsFolder f;
  testing::TempDir root;
  // A sysroot whose /etc/llama.cpp/config.ini turns on backend sampling (K6 with MTP).
  std::filesystem::copy(testing::sysroot_fixture("gb10"), root.path(),
                        std::filesystem::copy_options::recursive);
  root.write("etc/llama.cpp/config.ini", "[*]\nbackend-sampling = true\n");
  const auto result =
      testing::run_binary({"--sysroot", root.path().string(), "launch", "--dry-run", "--model",
                           f.model, "--llama-server", testing::stand_in_server_path().string()},
                          {"-u", "XDG_CONFIG_HOME", "-u", "HOME"});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.out.find("/etc/llama.cpp/config.ini:2"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("K6"), std::string::npos) << result.out;
}

// Memory options the command leaves at llama.cpp's default, set from outside: a variable is
// taken out (the plan sized the default), a config.ini entry stops the launch (launch cannot
// edit the file), --force goes on with a warning.
TEST(CliLaunchCommand, MemoryOptionsFromTheEnvironmentOrConfigIniDoNotReachTheServer) {
  ModelsFolder f;
  platform::Environment env;
  env.set("LLAMA_ARG_CACHE_TYPE_K", "q8_0");
  env.set("LLAMA_ARG_UBATCH", "1024");
  env.set("LLAMA_ARG_THREADS", "8");
  const json doc = dry_run_json_with_env(f.model, env);
  ASSERT_FALSE(doc.is_null());
  const auto removed = doc["environment"]["removed"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(removed.begin(), removed.end(), "LLAMA_ARG_CACHE_TYPE_K"), removed.end())
      << doc["environment"].dump(2);
  EXPECT_NE(std::find(removed.begin(), removed.end(), "LLAMA_ARG_UBATCH"), removed.end())
      << doc["environment"].dump(2);
  EXPECT_EQ(std::find(removed.begin(), removed.end(), "LLAMA_ARG_THREADS"), removed.end());
  EXPECT_NE(doc["environment"].dump().find("launch's own --cache-type-k"), std::string::npos)
      << doc["environment"].dump(2);

  testing::TempDir root;
  std::filesystem::copy(testing::sysroot_fixture("gb10"), root.path(),
                        std::filesystem::copy_options::recursive);
  root.write("etc/llama.cpp/config.ini", "[*]\nthreads = 4\noverride-tensor = exps=CPU\n");
  const std::vector<std::string> args{"--sysroot",      root.path().string(),
                                      "launch",         "--dry-run",
                                      "--model",        f.model,
                                      "--llama-server", testing::stand_in_server_path().string()};
  const auto refused = testing::run_binary(args, {"-u", "XDG_CONFIG_HOME", "-u", "HOME"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("override-tensor = exps=CPU (/etc/llama.cpp/config.ini:3) changes "
                             "where tensors are placed"),
            std::string::npos)
      << refused.out;
  std::vector<std::string> forced = args;
  forced.insert(forced.begin() + 3, "--force");
  const auto went_on = testing::run_binary(forced, {"-u", "XDG_CONFIG_HOME", "-u", "HOME"});
  EXPECT_EQ(went_on.exit_code, 0) << went_on.out;
  EXPECT_NE(went_on.out.find("(going on: --force)"), std::string::npos) << went_on.out;
}

TEST(CliLaunchCommand, OldBuildIsAdaptedOrRefusedByName) {
  ModelsFolder f;
  testing::TempDir bin;
  const auto old_help = testing::fixture("llama-server/help-2025-02-commit-c392e50.txt");
  const auto server =
      bin.write("llama-server", "#!/bin/sh\ncat '" + old_help.string() + "'\n", true);
  const auto mtp = testing::run_cli_on(
      "gb10", {"launch", "--dry-run", "--model", f.model, "--llama-server", server.string()}, {});
  EXPECT_EQ(mtp.exit_code, 2);
  EXPECT_NE(mtp.err.find("--spec-type draft-mtp"), std::string::npos) << mtp.err;
  const auto single =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--json", "--model", f.model, "--no-mtp",
                           "--profile", "single-slot", "--llama-server", server.string()},
                          {});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const json doc = json::parse(single.out);
  const auto argv = doc["command_line"]["argv"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-fa"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "on"), argv.end());         // -fa is a switch there
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--no-mmap"), argv.end());  // K19 on GB10
}

// Issue 22 item 1: launch refuses a llama-server binary others could replace (exit 2, naming it,
// why and the fix) and never runs it, not even its --help.
TEST(CliLaunchCommand, ServerBinaryOthersCouldReplaceIsRefusedAndNeverRun) {
  ModelsFolder f;
  const auto ran = f.dir.path() / "ran.json";
  testing::ScopedEnv record("STANDIN_RECORD", ran.string());
  const auto open = testing::copy_into_open_dir(f.dir, testing::stand_in_server_path());
  const auto result = testing::run_cli_on(
      "gb10", {"launch", "--dry-run", "--model", f.model, "--llama-server", open.string()}, {});
  EXPECT_EQ(result.exit_code, 2) << result.err << result.out;
  EXPECT_NE(result.err.find("refusing to run " + open.string()), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("chmod go-w " + open.parent_path().string()), std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(ran));

  const auto foreign = testing::copy_owned_by_another_user(f.dir, testing::stand_in_server_path());
  if (!foreign) {
    GTEST_SKIP() << "giving a file to another user needs root (CI runs as root)";
  }
  const auto owned = testing::run_cli_on(
      "gb10", {"launch", "--dry-run", "--model", f.model, "--llama-server", foreign->string()}, {});
  EXPECT_EQ(owned.exit_code, 2) << owned.err << owned.out;
  EXPECT_NE(owned.err.find("binary owned by "), std::string::npos) << owned.err;
  EXPECT_NE(owned.err.find("(uid 65534), not by root"), std::string::npos) << owned.err;
  EXPECT_FALSE(std::filesystem::exists(ran));
}

TEST(CliLaunchCommand, SystemdUnitRunsTheSameCommand) {
  ModelsFolder f;
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--print", "systemd", "--form", "frozen", "--model", f.model,
                           "--llama-server", testing::stand_in_server_path().string()},
                          {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("UnsetEnvironment=GGML_CUDA_ENABLE_UNIFIED_MEMORY"), std::string::npos);
  EXPECT_NE(result.out.find("\"" + f.dir.path().string() + "/Qwen3.8-27B 'Q4_K_M' $$x.gguf\""),
            std::string::npos)
      << result.out;
}

// A model path holding everything that means something to systemd or a shell.
const std::string kOddModelPath =
    "odd dir %h $HOME ;/model 'q' \"d\" \\ ; 100% $x ${Y}\nnew \xC3\xA9.gguf";

// The argv `launch --dry-run` plans for the model at kOddModelPath, and the unit
// `launch --print systemd` prints for it.
struct OddModelUnit {
  std::vector<std::string> planned;
  std::string unit;
};

// Runs `launch ARGS --model <f's model> --llama-server <the stand-in>` on the gb10 fixture.
testing::CliResult launch_on_model(const ModelsFolder& f, std::vector<std::string> args) {
  args.insert(args.begin(), "launch");
  args.insert(args.end(),
              {"--model", f.model, "--llama-server", testing::stand_in_server_path().string()});
  return testing::run_cli_on("gb10", args, {});
}

OddModelUnit odd_model_unit(const ModelsFolder& f) {
  const auto planned = launch_on_model(f, {"--dry-run", "--json"});
  EXPECT_EQ(planned.exit_code, 0) << planned.err;
  const auto printed = launch_on_model(f, {"--print", "systemd", "--form", "frozen"});
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  OddModelUnit out;
  if (planned.exit_code == 0) {
    out.planned = json::parse(planned.out)["command_line"]["argv"].get<std::vector<std::string>>();
  }
  out.unit = printed.out;
  return out;
}

// Read back as systemd reads it, the unit runs exactly the planned argv, and no field lets a
// line break, a '%' or a '$' through: no directive is added, no specifier or variable expands.
TEST(CliLaunchCommand, SystemdUnitOfAnOddModelPathRunsThePlannedArgv) {
  ModelsFolder f(kOddModelPath);
  const OddModelUnit odd = odd_model_unit(f);
  ASSERT_FALSE(odd.planned.empty());
  EXPECT_NE(std::find(odd.planned.begin(), odd.planned.end(), f.model), odd.planned.end());
  const testing::UnitReading reading = testing::read_unit(odd.unit);
  std::vector<std::string> problems = reading.problems;
  std::set<std::string> keys;
  for (const testing::UnitAssignment& a : reading.assignments) {
    keys.insert(a.section + "." + a.key);
  }
  EXPECT_EQ(keys, (std::set<std::string>{"Unit.Description", "Unit.After", "Service.Type",
                                         "Service.ExecStart", "Service.UnsetEnvironment",
                                         "Service.Restart", "Service.RestartSec",
                                         "Service.TimeoutStartSec", "Install.WantedBy"}))
      << odd.unit;
  const auto exec = reading.values("Service", "ExecStart");
  ASSERT_EQ(exec.size(), 1u) << odd.unit;
  EXPECT_EQ(testing::unit_exec_argv(exec[0], problems), odd.planned) << odd.unit;
  const auto description = reading.values("Unit", "Description");
  ASSERT_EQ(description.size(), 1u) << odd.unit;
  EXPECT_EQ(testing::unit_specifiers_expanded(description[0], problems),
            "llama-server (model 'q' \"d\" \\ ; 100% $x ${Y} new \xC3\xA9.gguf) planned by "
            "gb10tune");
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << odd.unit;
}

// systemd itself loads the same unit to the same argv and description, where installed.
TEST(CliLaunchCommand, SystemdUnitOfAnOddModelPathPassesSystemdAnalyze) {
  ModelsFolder f(kOddModelPath);
  const OddModelUnit odd = odd_model_unit(f);
  ASSERT_FALSE(odd.planned.empty());
  std::string why;
  const auto analyzed =
      testing::systemd_analyze(f.dir.path(), "llama-server.service", odd.unit, why);
  if (!analyzed) {
    ASSERT_FALSE(testing::systemd_analyze_required()) << "GB10TUNE_REQUIRE_SYSTEMD=1: " << why;
    GTEST_SKIP() << why;
  }
  EXPECT_TRUE(analyzed->warnings.empty()) << ::testing::PrintToString(analyzed->warnings) << "\n"
                                          << odd.unit;
  EXPECT_EQ(analyzed->argv, odd.planned) << analyzed->output;
  EXPECT_EQ(analyzed->description,
            "llama-server (model 'q' \"d\" \\ ; 100% $x ${Y} new \xC3\xA9.gguf) planned by "
            "gb10tune");
}

// A llama-server path systemd refuses in ExecStart= (a quote in it) exits 2 naming it, and no
// unit is printed.
TEST(CliLaunchCommand, SystemdUnitRefusesAServerPathSystemdCannotRun) {
  ModelsFolder f;
  const auto server = f.dir.path() / "o'brien" / "llama-server";
  std::filesystem::create_directories(server.parent_path());
  std::filesystem::create_symlink(testing::stand_in_server_path(), server);
  const auto result = testing::run_cli_on("gb10",
                                          {"launch", "--print", "systemd", "--form", "frozen",
                                           "--model", f.model, "--llama-server", server.string()},
                                          {});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_NE(result.err.find(server.string()), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("ExecStart="), std::string::npos) << result.err;
}

TEST(CliLaunchCommand, LlamaSwapEntryRunsTheSameCommandOnItsPort) {
  ModelsFolder f;
  const auto result = launch_on_model(f, {"--print", "llama-swap", "--form", "frozen"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // Read back by a YAML parser: models → one entry → cmd, ttl, checkEndpoint and nothing else.
  YAML::Node doc;
  ASSERT_NO_THROW(doc = YAML::Load(result.out)) << result.out;
  ASSERT_TRUE(doc.IsMap()) << result.out;
  ASSERT_EQ(doc.size(), 1u) << result.out;
  const YAML::Node models = doc["models"];
  ASSERT_TRUE(models.IsMap()) << result.out;
  ASSERT_EQ(models.size(), 1u) << result.out;
  EXPECT_EQ(models.begin()->first.as<std::string>(), "Qwen3.8-27B 'Q4_K_M' $x");
  const YAML::Node entry = models.begin()->second;
  ASSERT_TRUE(entry.IsMap()) << result.out;
  EXPECT_EQ(entry.size(), 3u) << result.out;
  EXPECT_EQ(entry["ttl"].as<int>(), 300);
  EXPECT_EQ(entry["checkEndpoint"].as<std::string>(), "/health");
  ASSERT_TRUE(entry["cmd"].IsScalar()) << result.out;
  const std::string cmd = entry["cmd"].as<std::string>();
  EXPECT_EQ(cmd.rfind("/usr/bin/env -u GGML_CUDA_ENABLE_UNIFIED_MEMORY " +
                          testing::stand_in_server_path().string() + " ",
                      0),
            0u)
      << cmd;
  // The same argv as the systemd unit, but on llama-swap's port.
  EXPECT_NE(cmd.find(shell_quote(f.model)), std::string::npos) << cmd;
  EXPECT_NE(cmd.find(" --port ${PORT}"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("--port", cmd.find("--port") + 1), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("8080"), std::string::npos) << cmd;
}

// The preset's keys, read back as llama.cpp's preset loader reads them: every key an option of
// the build (by its key spelling), host and port left to the router.
TEST(CliLaunchCommand, PresetSectionHoldsThePlannedOptions) {
  ModelsFolder f;
  const auto result =
      testing::run_cli_on("gb10",
                          {"launch", "--print", "preset", "--model", f.model, "--llama-server",
                           testing::stand_in_server_path().string()},
                          {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto help = server::ServerFlags::parse_help(
      testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt")));
  std::string section;
  std::map<std::string, std::string> keys;
  bool version = false;
  for (std::string_view line : split(result.out, '\n')) {
    line = trim(line);
    if (line.empty() || line.front() == ';') {
      continue;
    }
    if (line.front() == '[') {
      ASSERT_EQ(line.back(), ']') << line;
      EXPECT_TRUE(section.empty()) << "one section only";
      section = std::string(line.substr(1, line.size() - 2));
      continue;
    }
    const std::size_t eq = line.find(" = ");
    ASSERT_NE(eq, std::string_view::npos) << line;
    const std::string key(line.substr(0, eq));
    if (section.empty()) {
      EXPECT_EQ(key, "version");
      version = true;
      continue;
    }
    EXPECT_NE(help.find_by_key(key), nullptr) << key;
    EXPECT_TRUE(keys.emplace(key, std::string(line.substr(eq + 3))).second) << key;
  }
  EXPECT_TRUE(version);
  EXPECT_EQ(section, "Qwen3.8-27B 'Q4_K_M' $x");
  EXPECT_EQ(keys["model"], f.model);
  EXPECT_EQ(keys["flash-attn"], "on");
  EXPECT_EQ(keys["kv-unified"], "true");
  EXPECT_EQ(keys.count("host"), 0u);
  EXPECT_EQ(keys.count("port"), 0u);
}

// The real binary starts the stand-in: the bad variable never reaches it, verify passes,
// a second launch is refused, stop ends it.
// Issue 22 item 5: launch starts nothing from a state directory its group may write (the record
// it would leave there is what stop and watch --restart believe next): exit 1, naming it.
TEST(CliLaunchStart, GroupWritableStateDirIsRefusedBeforeTheStart) {
  testing::TempDir dir;
  const auto model = dir.path() / "tiny model.gguf";
  testing::report_model().write(model);
  const auto state = dir.path() / "state" / "gb10tune";
  ASSERT_TRUE(trust::ensure_private_dir(state));
  const std::string refusal = testing::make_group_writable(state);
  const int port = testing::free_tcp_port();
  const auto result = testing::run_binary(
      {"launch", "--model", model.string(), "--llama-server",
       testing::stand_in_server_path().string(), "--profile", "single-slot", "--ctx-per-slot",
       "4096", "--port", std::to_string(port), "--reserve", "0", "--overhead", "0"},
      {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
       "XDG_CONFIG_HOME=" + (dir.path() / "config").string()});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_TRUE(testing::contains(result.out, refusal)) << result.out;
  EXPECT_FALSE(std::filesystem::exists(state / "llama-server.pid"));
  EXPECT_FALSE(http::http_get(http::Url{"http", "127.0.0.1", port, ""}, "/health",
                              std::chrono::milliseconds(300)))
      << "a server was started";
}

TEST(CliLaunchStart, StartsVerifiesAndStops) {
  testing::TempDir dir;
  const auto model = dir.path() / "tiny model.gguf";
  testing::report_model().write(model);
  const auto record = dir.path() / "server-record.json";
  const auto port = std::to_string(testing::free_tcp_port());
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
                                        "XDG_CONFIG_HOME=" + (dir.path() / "config").string(),
                                        "GGML_CUDA_ENABLE_UNIFIED_MEMORY=0",
                                        "STANDIN_RECORD=" + record.string(), "STANDIN_LOAD_MS=300",
                                        // A build with every CPU feature verify knows (K11).
                                        "STANDIN_SYSTEM_INFO=system_info: n_threads = 2 | CPU : "
                                        "AVX2 = 1 | FMA = 1 | F16C = 1 | AVX512 = 1 | DOTPROD = "
                                        "1 | MATMUL_INT8 = 1 | SVE = 1 |"};
  const std::vector<std::string> args = {"launch",
                                         "--model",
                                         model.string(),
                                         "--llama-server",
                                         testing::stand_in_server_path().string(),
                                         "--profile",
                                         "single-slot",
                                         "--ctx-per-slot",
                                         "4096",
                                         "--port",
                                         port,
                                         "--reserve",
                                         "0",
                                         "--overhead",
                                         "0",
                                         "--cache-ram",
                                         "0"};
  const auto started = testing::run_binary(args, env);
  ASSERT_EQ(started.exit_code, 0) << started.out;
  EXPECT_NE(started.out.find("removed GGML_CUDA_ENABLE_UNIFIED_MEMORY=0"), std::string::npos)
      << started.out;
  EXPECT_NE(started.out.find("is ready at http://127.0.0.1:" + port), std::string::npos);

  const json seen = testing::read_record(record);
  EXPECT_FALSE(seen["env"].contains("GGML_CUDA_ENABLE_UNIFIED_MEMORY")) << seen["env"].dump();
  EXPECT_EQ(seen["argv"][2], model.string());

  const auto verified = testing::run_binary({"verify", "--json"}, env);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_NE(verified.out.find("launch record"), std::string::npos) << verified.out;

  const auto again = testing::run_binary(args, env);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_NE(again.out.find("already running"), std::string::npos) << again.out;

  const auto stopped = testing::run_binary({"stop"}, env);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state/gb10tune/llama-server.pid"));
}

// The lines of `text` that cite fact `fact` ("[K4]").
std::vector<std::string> lines_citing(const std::string& text, const std::string& fact) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.find("[" + fact + "]") != std::string::npos) {
      out.push_back(line);
    }
    start = end + 1;
  }
  return out;
}

// The issue-18 setup with a real-shaped MTP model (tiny-qwen35, the model of the captured
// answers) against the stand-in, which answers /props and /slots the way llama-server
// 3f545be does: /props says "speculative.types": "none" while every slot drafts. Launch, then
// verify: every K4 line is ✔ and the server's drafting is read from /slots.
TEST(CliLaunchStart, MtpModelLaunchedThenVerifiedPassesEveryK4Line) {
  testing::TempDir dir;
  const auto model = dir.path() / "tiny-qwen35.gguf";
  testing::tiny_qwen35_model().write(model);
  const auto port = std::to_string(testing::free_tcp_port());
  const auto record = dir.path() / "server-record.json";
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
                                        "XDG_CONFIG_HOME=" + (dir.path() / "config").string(),
                                        "STANDIN_LOAD_MS=100", "STANDIN_RECORD=" + record.string(),
                                        "STANDIN_SYSTEM_INFO=system_info: n_threads = 2 | CPU : "
                                        "AVX2 = 1 | FMA = 1 | F16C = 1 | AVX512 = 1 | DOTPROD = "
                                        "1 | MATMUL_INT8 = 1 | SVE = 1 |"};
  const auto started = testing::run_binary(
      {"launch", "--model", model.string(), "--llama-server",
       testing::stand_in_server_path().string(), "--slots", "3", "--ctx-per-slot", "8192",
       "--cache-ram", "0", "--port", port, "--reserve", "0", "--overhead", "0"},
      env);
  ASSERT_EQ(started.exit_code, 0) << started.out;
  const std::string argv = testing::read_record(record)["argv"].dump();
  EXPECT_NE(argv.find(R"("--spec-type","draft-mtp","--spec-draft-n-max","4")"), std::string::npos)
      << argv;
  EXPECT_NE(argv.find(R"("-kvu")"), std::string::npos) << argv;

  const auto verified = testing::run_binary({"verify", "--smoke"}, env);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_NE(verified.out.find("verify: PASS"), std::string::npos) << verified.out;
  const auto k4 = lines_citing(verified.out, "K4");
  EXPECT_GE(k4.size(), 3u) << verified.out;
  for (const std::string& line : k4) {
    EXPECT_EQ(line.rfind("  ✔ ", 0), 0u) << line;
  }
  EXPECT_NE(verified.out.find("✔ the server drafts as planned [K4]: on: /slots: 3 of 3 slots "
                              "speculative; smoke completion: draft_n 132, 89 accepted"),
            std::string::npos)
      << verified.out;
  EXPECT_NE(verified.out.find("/props: speculative.types \"none\" (the per-request default"),
            std::string::npos)
      << verified.out;
  // /props matches: 3 slots, 24576 cells each from the unified pool, the model as given.
  EXPECT_NE(verified.out.find("✔ /props matches the flags [K9]: 3 slots, context 24576 per slot, "
                              "model " +
                              model.string()),
            std::string::npos)
      << verified.out;

  const auto stopped = testing::run_binary({"stop"}, env);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
}

// The issue's first example: a 2 MB llama on a 25 GB machine without a GPU, no options. The
// default profile (3 slots of 192K cells, a 24 GiB prompt cache) is fitted to the machine.
TEST(CliLaunchCommand, NoOptionsOnASmallMachineFitsTheDefaultProfile) {
  testing::TempDir dir;
  testing::GgufWriter w;
  w.add("general.architecture", testing::gguf_string("llama"))
      .add("llama.block_count", testing::gguf_uint32(2))
      .add("llama.context_length", testing::gguf_uint32(4096))
      .add("llama.embedding_length", testing::gguf_uint32(256))
      .add("llama.attention.head_count", testing::gguf_uint32(4))
      .add("llama.attention.head_count_kv", testing::gguf_uint32(2));
  w.tensor("token_embd.weight", {256, 2048}, gguf::GgmlType::f32);  // 2 MiB
  std::filesystem::create_directories(dir.path() / "models");
  w.write(dir.path() / "models" / "random-llama.gguf");
  testing::TempDir root;
  std::filesystem::copy(testing::sysroot_fixture("no-gpu"), root.path(),
                        std::filesystem::copy_options::recursive);
  root.write("proc/meminfo",
             "MemTotal:       26000000 kB\nMemFree:        25000000 kB\n"
             "MemAvailable:   24414062 kB\n");  // 25 GB
  const auto result =
      testing::run_binary({"--sysroot", root.path().string(), "launch", "--dry-run", "--json",
                           "--models-dir", (dir.path() / "models").string(), "--llama-server",
                           testing::stand_in_server_path().string()},
                          {"-u", "XDG_CONFIG_HOME", "HOME=" + dir.path().string()});
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const json doc = json::parse(result.out.substr(result.out.find("{\n")));
  EXPECT_EQ(doc["profile"]["name"], "gb10-dense-mtp");
  EXPECT_EQ(doc["plan"]["fits"], true);
  EXPECT_LE(doc["plan"]["total_bytes"].get<std::uint64_t>(),
            doc["plan"]["available_bytes"].get<std::uint64_t>());
  ASSERT_EQ(doc["fit"]["given_up"].size(), 1u) << doc["fit"].dump();
  EXPECT_EQ(doc["fit"]["given_up"][0]["setting"], "cache_ram_mib");
  EXPECT_EQ(doc["fit"]["given_up"][0]["asked"], 24576);
  EXPECT_LT(doc["fit"]["given_up"][0]["chosen"].get<std::int64_t>(), 24576);
  EXPECT_EQ(doc["config"]["slots"], 3);
  EXPECT_NE(doc["command_line"]["shell"].get<std::string>().find(
                "--cache-ram " + doc["fit"]["given_up"][0]["chosen"].dump()),
            std::string::npos)
      << doc["command_line"]["shell"];

  // Every frozen export carries the fitted command, not the profile's (a unit with the 24 GiB
  // cache would not fit), and says on stderr what was lowered.
  const std::string chosen = doc["fit"]["given_up"][0]["chosen"].dump();
  for (const auto& [kind, expect] :
       std::vector<std::pair<std::string, std::string>>{{"systemd", "--cache-ram " + chosen},
                                                        {"llama-swap", "--cache-ram " + chosen},
                                                        {"preset", "cache-ram = " + chosen}}) {
    const auto exported =
        testing::run_binary({"--sysroot", root.path().string(), "launch", "--print", kind, "--form",
                             "frozen", "--models-dir", (dir.path() / "models").string(),
                             "--llama-server", testing::stand_in_server_path().string()},
                            {"-u", "XDG_CONFIG_HOME", "HOME=" + dir.path().string()});
    EXPECT_EQ(exported.exit_code, 0) << kind << ": " << exported.out;
    EXPECT_NE(exported.out.find(expect), std::string::npos) << kind << ": " << exported.out;
    EXPECT_EQ(exported.out.find(expect.substr(0, expect.size() - chosen.size()) + "24576"),
              std::string::npos)
        << kind << ": " << exported.out;
    EXPECT_NE(exported.out.find("to fit in memory, lowered cache_ram_mib 24576 → " + chosen),
              std::string::npos)
        << kind << ": " << exported.out;
  }
  // With the prompt cache fixed on the command line and too large, nothing is printed.
  const auto refused = testing::run_binary(
      {"--sysroot", root.path().string(), "launch", "--print", "systemd", "--cache-ram", "30000",
       "--no-fit", "--models-dir", (dir.path() / "models").string(), "--llama-server",
       testing::stand_in_server_path().string()},
      {"-u", "XDG_CONFIG_HOME", "HOME=" + dir.path().string()});
  EXPECT_EQ(refused.exit_code, 3) << refused.out;
  EXPECT_NE(refused.out.find("nothing was printed"), std::string::npos) << refused.out;
  EXPECT_EQ(refused.out.find("ExecStart"), std::string::npos) << refused.out;
}

// launch measures the ready server like with like (an idle CPU server against the plan's
// figure at load without the compute buffers it has not touched), learns only from a run within
// 5% of it, records it under the configuration's shape, and the next plan of the same shape
// applies it; verify compares plan and process; another shape is left alone.
TEST(CliLaunchStart, CalibrationIsLearnedOnlyWithinTheToleranceAndAppliedToItsShape) {
  testing::TempDir dir;
  const auto model = dir.path() / "m.gguf";
  // Trained to 1M tokens, so that one slot may hold all of them.
  testing::tiny_qwen35_model(true, 1u << 20).write(model);
  const auto port = std::to_string(testing::free_tcp_port());
  std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
                                  "XDG_CONFIG_HOME=" + (dir.path() / "config").string(),
                                  "STANDIN_LOAD_MS=100"};
  // 1,048,576 cells: the caches are ~800 MiB, far above what the stand-in holds alone even
  // under AddressSanitizer (~240 MiB); the masks of the compute buffers are 2 GiB.
  const std::vector<std::string> args = {"launch",         "--json",
                                         "--model",        model.string(),
                                         "--llama-server", testing::stand_in_server_path().string(),
                                         "--profile",      "single-slot",
                                         "--ctx-per-slot", "1048576",
                                         "--port",         port,
                                         "--reserve",      "0",
                                         "--overhead",     "0",
                                         "--cache-ram",    "0"};
  const auto start = [&](const std::vector<std::string>& argv) {
    const auto result = testing::run_binary(argv, env);
    EXPECT_EQ(result.exit_code, 0) << result.out;
    const auto brace = result.out.find("{\n");
    return brace == std::string::npos ? json::object() : json::parse(result.out.substr(brace));
  };

  // The stand-in alone holds a few MiB: far below the plan, reported, not learned from.
  const json one = start(args);
  const json& far = one["calibration"];
  ASSERT_TRUE(far["measured_bytes"].is_number_unsigned()) << far.dump();
  EXPECT_EQ(far["verdict"], "below") << far.dump();
  EXPECT_EQ(far["recorded"], false);
  EXPECT_NE(far.value("why_not_recorded", "").find("more than the 5%"), std::string::npos)
      << far.dump();
  EXPECT_EQ(far["key"]["shape"]["offload"], "none");
  EXPECT_GT(far["on_demand_bytes"].get<std::uint64_t>(), 500ull << 20);  // the masks
  ASSERT_EQ(testing::run_binary({"stop"}, env).exit_code, 0);

  // Told to hold the rest of the figure at load (+1%), it is learned from.
  const auto at_load = far["expected_at_load_bytes"].get<std::uint64_t>();
  const auto alone = far["rss_bytes"].get<std::uint64_t>();
  env.push_back("STANDIN_RESIDENT_BYTES=" + std::to_string(at_load + at_load / 100 - alone));
  const json two = start(args);
  const json& learned = two["calibration"];
  EXPECT_EQ(learned["verdict"], "matches") << learned.dump();
  EXPECT_EQ(learned["recorded"], true) << learned.dump();
  EXPECT_EQ(learned["runs"], 1);
  EXPECT_EQ(two["plan"]["calibration_bytes"], 0);
  const std::int64_t difference =
      static_cast<std::int64_t>(learned["measured_bytes"].get<std::uint64_t>()) -
      static_cast<std::int64_t>(learned["expected_at_load_bytes"].get<std::uint64_t>());
  ASSERT_EQ(testing::run_binary({"stop"}, env).exit_code, 0);

  const json three = start(args);
  EXPECT_EQ(three["plan"]["calibration_bytes"], difference);
  EXPECT_NE(three["plan"]["calibration_source"].get<std::string>().find("median of 1 measured run"),
            std::string::npos);
  EXPECT_EQ(three["calibration"]["runs"], 2);
  EXPECT_EQ(three["calibration"]["calibrated_load_bytes"],
            three["plan"]["load_bytes"].get<std::int64_t>() + difference);

  const auto verified = testing::run_binary({"verify", "--json"}, env);
  const json checks = json::parse(verified.out)["servers"][0]["checks"];
  const auto it = std::find_if(checks.begin(), checks.end(),
                               [](const json& c) { return c["id"] == "plan-vs-measured"; });
  ASSERT_NE(it, checks.end()) << verified.out;
  EXPECT_EQ((*it)["severity"], "ok") << it->dump();
  ASSERT_EQ(testing::run_binary({"stop"}, env).exit_code, 0);

  auto explain = args;
  explain[1] = "--dry-run";
  explain.push_back("--explain");
  const auto planned = testing::run_binary(explain, env);
  ASSERT_EQ(planned.exit_code, 0) << planned.out;
  EXPECT_NE(planned.out.find("learned: median of 2 measured run(s) of qwen35 on cpu"),
            std::string::npos)
      << planned.out;
  // Another shape (a larger micro-batch) learns on its own: nothing applied, and it says why.
  explain.insert(explain.end(), {"--ubatch", "1024"});
  const auto other = testing::run_binary(explain, env);
  ASSERT_EQ(other.exit_code, 0) << other.out;
  EXPECT_EQ(other.out.find("learned:"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("the runs of 1 other configuration shape(s)"), std::string::npos)
      << other.out;
}

TEST(CliLaunchStart, ServerThatDiesDuringLoadIsClassified) {
  testing::TempDir dir;
  const auto model = dir.path() / "m.gguf";
  testing::report_model().write(model);
  const auto port = std::to_string(testing::free_tcp_port());
  const auto result = testing::run_binary(
      {"launch", "--model", model.string(), "--llama-server",
       testing::stand_in_server_path().string(), "--profile", "single-slot", "--ctx-per-slot",
       "4096", "--port", port, "--reserve", "0", "--overhead", "0"},
      {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
       "XDG_CONFIG_HOME=" + (dir.path() / "config").string(), "STANDIN_CRASH=oom"});
  EXPECT_EQ(result.exit_code, 5) << result.out;
  EXPECT_NE(result.out.find("out of memory"), std::string::npos) << result.out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state/gb10tune/llama-server.pid"));
}

}  // namespace
}  // namespace gb10tune

namespace gb10tune {
namespace {

std::uint64_t weights_of_gemma3_projector() {
  return (14ull * 14 * 3 * 1152 + 2560ull * 1152) * 2;
}

json dry_run(const std::vector<std::string>& args, int expected_exit = 0) {
  std::vector<std::string> argv{"launch", "--dry-run", "--json", "--llama-server",
                                testing::stand_in_server_path().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto result = testing::run_cli_on("gb10", argv, {});
  EXPECT_EQ(result.exit_code, expected_exit) << result.err << result.out;
  return result.exit_code == 0 ? json::parse(result.out) : json::object();
}

int count_of(const std::vector<std::string>& argv, const std::string& word) {
  return static_cast<int>(std::count(argv.begin(), argv.end(), word));
}

TEST(CliLaunchProjector, WeightsAndComputeBufferAreRowsOfThePlanOnTheGpu) {
  testing::TempDir dir;
  const auto model = (dir.path() / "model.gguf").string();
  testing::tiny_qwen35_model(false).write(model);
  const auto mmproj = testing::write_gemma3_projector(dir);
  const json doc = dry_run({"--model", model, "--mmproj", mmproj, "--backend", "cuda", "--no-mtp",
                            "--slots", "1", "-c", "4096"});
  ASSERT_TRUE(doc.contains("plan"));
  const json& plan = doc["plan"];
  EXPECT_EQ(plan["projector_bytes"].get<std::uint64_t>(), weights_of_gemma3_projector());
  EXPECT_EQ(plan["projector"]["buffer"], "CUDA0");
  EXPECT_EQ(plan["projector"]["type"], "gemma3");
  // flash attention on (the profile): the MLP phase of 4096 patches on CUDA0, and the 896x896
  // f32 input image in clip's CPU buffer.
  EXPECT_EQ(plan["projector"]["compute_bytes"].get<std::uint64_t>(),
            (3ull * 1152 + 4304) * 4096 * 4);
  EXPECT_EQ(plan["projector"]["host_compute_bytes"].get<std::uint64_t>(), 3ull * 896 * 896 * 4);
  EXPECT_EQ(plan["projector_compute_bytes"].get<std::uint64_t>(),
            (3ull * 1152 + 4304) * 4096 * 4 + 3ull * 896 * 896 * 4);
  const auto parts =
      plan["weights_bytes"].get<std::uint64_t>() + plan["projector_bytes"].get<std::uint64_t>() +
      plan["projector_compute_bytes"].get<std::uint64_t>() +
      plan["kv_full_bytes"].get<std::uint64_t>() + plan["kv_swa_bytes"].get<std::uint64_t>() +
      plan["recurrent_bytes"].get<std::uint64_t>() + plan["mtp_kv_bytes"].get<std::uint64_t>() +
      plan["compute_bytes"].get<std::uint64_t>() + plan["output_bytes"].get<std::uint64_t>() +
      plan["runtime_bytes"].get<std::uint64_t>();
  EXPECT_EQ(plan["load_bytes"].get<std::uint64_t>(), parts);
  const auto argv = doc["command_line"]["argv"].get<std::vector<std::string>>();
  EXPECT_EQ(count_of(argv, "--mmproj"), 1);
  EXPECT_EQ(count_of(argv, "--no-mmproj-offload"), 0);
}

TEST(CliLaunchProjector, NoOffloadKeepsItInHostMemoryAndIsPassedOn) {
  testing::TempDir dir;
  const auto model = (dir.path() / "model.gguf").string();
  testing::tiny_qwen35_model(false).write(model);
  const auto mmproj = testing::write_gemma3_projector(dir);
  const json doc = dry_run({"--model", model, "--mmproj", mmproj, "--backend", "cuda", "--no-mtp",
                            "--no-mmproj-offload", "--flash-attn", "off"});
  ASSERT_TRUE(doc.contains("plan"));
  EXPECT_EQ(doc["plan"]["projector"]["buffer"], "CPU");
  EXPECT_EQ(doc["plan"]["projector"]["peak_phase"], "attention scores (KQ)");
  EXPECT_EQ(doc["plan"]["projector_compute_bytes"].get<std::uint64_t>(),
            4096ull * 4096 * 16 * 4 + 6ull * 1152 * 4096 * 4);
  EXPECT_EQ(doc["config"]["mmproj_offload"], false);
  const auto argv = doc["command_line"]["argv"].get<std::vector<std::string>>();
  EXPECT_EQ(count_of(argv, "--no-mmproj-offload"), 1);
  EXPECT_EQ(doc["settings"]["mmproj_offload"]["source"], "command line");
}

TEST(CliLaunchProjector, ProjectorOptionsAfterDoubleDashArePlannedAndPassedOnce) {
  testing::TempDir dir;
  const auto model = (dir.path() / "model.gguf").string();
  testing::tiny_qwen35_model(false).write(model);
  const auto mmproj = testing::write_gemma3_projector(dir);
  for (const std::vector<std::string>& after :
       {std::vector<std::string>{"-mm", mmproj, "--no-mmproj-offload"},
        std::vector<std::string>{"--mmproj=" + mmproj, "--no-mmproj-offload", "--threads", "4"}}) {
    std::vector<std::string> args{"--model", model, "--backend", "cuda", "--no-mtp", "--"};
    args.insert(args.end(), after.begin(), after.end());
    const json doc = dry_run(args);
    ASSERT_TRUE(doc.contains("plan")) << after.front();
    EXPECT_EQ(doc["plan"]["projector_bytes"].get<std::uint64_t>(), weights_of_gemma3_projector());
    EXPECT_EQ(doc["plan"]["projector"]["buffer"], "CPU");
    const auto argv = doc["command_line"]["argv"].get<std::vector<std::string>>();
    EXPECT_EQ(count_of(argv, "--mmproj"), 1);
    EXPECT_EQ(count_of(argv, "-mm"), 0);
    EXPECT_EQ(count_of(argv, "--no-mmproj-offload"), 1);
  }
}

TEST(CliLaunchProjector, DoubleDashProjectorContradictingLaunchsOwnIsAUsageError) {
  testing::TempDir dir;
  const auto model = (dir.path() / "model.gguf").string();
  testing::tiny_qwen35_model(false).write(model);
  const auto mmproj = testing::write_gemma3_projector(dir);
  const auto result = testing::run_cli_on(
      "gb10",
      {"launch", "--dry-run", "--llama-server", testing::stand_in_server_path().string(), "--model",
       model, "--no-mmproj", "--", "--mmproj", mmproj},
      {});
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_NE(result.err.find("contradicts launch's own --mmproj"), std::string::npos) << result.err;
}

TEST(CliLaunchProjector, ProfileKeyTurnsOffloadOff) {
  testing::TempDir dir;
  const auto model = (dir.path() / "model.gguf").string();
  testing::tiny_qwen35_model(false).write(model);
  const auto mmproj = testing::write_gemma3_projector(dir);
  const auto profile =
      dir.write("profile.json", R"({"description": "projector on the CPU", "settings": )"
                                R"({"mmproj_offload": false, "mtp": "off"}})");
  const json doc = dry_run(
      {"--model", model, "--mmproj", mmproj, "--backend", "cuda", "--profile", profile.string()});
  ASSERT_TRUE(doc.contains("plan"));
  EXPECT_EQ(doc["plan"]["projector"]["buffer"], "CPU");
  EXPECT_EQ(doc["settings"]["mmproj_offload"]["source"], "profile " + profile.string());
}

}  // namespace
}  // namespace gb10tune
