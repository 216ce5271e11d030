#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/launch/launch_record.hpp"
#include "support/fake_bandwidth.hpp"
#include "support/fake_server.hpp"
#include "support/server_results.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::FakeServer;
using testing::make_timings;
using testing::run_cli_on;

std::function<void(cli::Context&)> with(FakeServer& server) {
  return [&server](cli::Context& ctx) { ctx.connect_server = server.connector(); };
}

platform::Environment state_env(const testing::TempDir& dir) {
  platform::Environment env;
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  env.set("HOME", dir.path().string());
  return env;
}

// A server with an MTP model: decode ~23 t/s, ~60% of 300 draft tokens accepted.
void make_speculative(FakeServer& server) {
  server.info.model_path = "/models/qwen.gguf";
  server.info.build_info = "b7000-3f545be";
  server.info.total_slots = 1;
  server.info.n_ctx_per_slot = 65536;
  server.info.slots_reported = 1;  // /slots: the one slot has a draft context
  server.info.slots_speculative = 1;
  server.info.props = {{"model_path", "/models/qwen.gguf"},
                       {"build_info", "b7000-3f545be"},
                       {"total_slots", 1},
                       {"chat_template", "{{ long }}"},
                       {"default_generation_settings",
                        {{"n_ctx", 65536}, {"params", {{"speculative", {{"n_max", 4}}}}}}}};
  server.timings = [](int n, const std::string&) {
    bench::ServerTimings t = make_timings(800 + 10 * n, 300 + n % 3, 256, 23 + 0.1 * (n % 5));
    t.draft_n = 300;
    t.draft_n_accepted = 180 + n % 4;
    return t;
  };
}

TEST(CliBenchServer, NoServerAnsweringIsAClearFailure) {
  FakeServer server;
  server.refuse = "Connection refused";
  const auto result =
      run_cli_on("gb10", {"bench", "server", "--url", "http://127.0.0.1:9"}, {}, {}, with(server));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("gb10tune bench server: no llama-server answers at "
                            "http://127.0.0.1:9 (Connection refused)"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(server.requests.empty());
}

TEST(CliBenchServer, WithoutUrlOrLaunchRecordIsAUsageError) {
  testing::TempDir dir;
  FakeServer server;
  const auto result = run_cli_on("gb10", {"bench", "server"}, state_env(dir), {}, with(server));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("no --url and no launch record"), std::string::npos) << result.err;
  EXPECT_TRUE(server.urls.empty());
}

TEST(CliBenchServer, BadInputsAreUsageErrors) {
  testing::TempDir dir;
  const auto bad = dir.write("bad.jsonl", "{\"prompt\": 1}\n");
  FakeServer server;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "server", "--url", "http://h:1", "--prompts",
                                 bad.string()},
        std::vector<std::string>{"bench", "server", "--url", "http://h:1", "--prompts",
                                 (dir.path() / "missing.jsonl").string()},
        std::vector<std::string>{"bench", "server", "--url", "http://h:1", "--save", "../x"},
        std::vector<std::string>{"bench", "server", "--concurrency", "1,0"},
        std::vector<std::string>{"bench", "server", "--samples", "0"},
        std::vector<std::string>{"bench", "--quick", "server", "--url", "http://h:1"}}) {
    const auto result = run_cli_on("gb10", args, state_env(dir), {}, with(server));
    EXPECT_EQ(result.exit_code, 2) << args.back() << ": " << result.err;
    EXPECT_FALSE(result.err.empty());
  }
  EXPECT_TRUE(server.requests.empty());
}

TEST(CliBenchServer, ReportsTheServersFiguresAndTheCeiling) {
  testing::TempDir dir;
  FakeServer server;
  make_speculative(server);
  const auto result = run_cli_on(
      "gb10",
      {"bench", "server", "--url", "http://127.0.0.1:8080", "--samples", "5", "--bandwidth", "237"},
      state_env(dir), {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(server.urls, (std::vector<std::string>{"http://127.0.0.1:8080"}));
  EXPECT_EQ(server.requests.size(), 6u);  // one warm-up + five samples
  EXPECT_NE(result.out.find("gb10tune bench server — http://127.0.0.1:8080"), std::string::npos);
  // Completions 1..5: decode 23.1 23.2 23.3 23.4 23.0 → median 23.2; the server's figures.
  EXPECT_NE(result.out.find("decode (t/s)                        23.2  [23.0, 23.4]"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("draft acceptance"), std::string::npos);
  // No bytes per token (no launch record, no readable model): the roofline says how to get it.
  EXPECT_NE(result.out.find("roofline (K12): not computed: bytes read per token unknown"),
            std::string::npos)
      << result.out;
  // Progress on stderr, one line per round.
  EXPECT_NE(result.err.find("[c=1 1/6] warm-up cli-readme/1: prefill 300.0 t/s (800 tokens)"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("[c=1 6/6]"), std::string::npos);
}

TEST(CliBenchServer, LaunchRecordGivesUrlArgvAndBytesPerToken) {
  testing::TempDir dir;
  launch::LaunchRecord record;
  record.pid = 4242;
  record.url = "http://127.0.0.1:9931";
  record.model_path = "/models/qwen.gguf";
  record.argv = {"/opt/llama-server",  "-m", "/models/qwen.gguf", "--spec-type", "draft-mtp",
                 "--spec-draft-n-max", "4"};
  record.bytes_per_token = 16'800'000'000;
  const auto state = dir.path() / "state" / "gb10tune";
  std::filesystem::create_directories(state);
  ASSERT_TRUE(launch::write_launch_record(state / "launch.json", record).ok());
  // The saved probe's cudaMalloc read is the bandwidth.
  testing::FakeBandwidth fake;
  const auto probe = run_cli_on("gb10", {"probe", "--quick-bench"}, state_env(dir),
                                [&fake](const kernels::CaseSpec& spec) { return fake(spec); });
  ASSERT_EQ(probe.exit_code, 0) << probe.err;

  FakeServer server;
  make_speculative(server);
  const auto result =
      run_cli_on("gb10", {"bench", "server", "--samples", "3", "--json", "--save", "mtp-n4"},
                 state_env(dir), {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(server.urls, (std::vector<std::string>{"http://127.0.0.1:9931"}));
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["url"], "http://127.0.0.1:9931");
  EXPECT_EQ(doc["date"], "2026-11-29T12:00:00Z");
  EXPECT_EQ(doc["server"]["launch_argv"].size(), 7u);
  EXPECT_FALSE(doc["server"]["props"].contains("chat_template"));
  EXPECT_EQ(doc["settings"]["argv:--spec-draft-n-max"], "4");
  // What the server runs: /slots says it drafts, the launch record says how.
  EXPECT_EQ(doc["server"]["speculative"], true);
  EXPECT_EQ(doc["server"]["spec_type"], "draft-mtp");
  EXPECT_EQ(doc["server"]["spec_draft_n_max"], 4);
  EXPECT_EQ(doc["server"]["spec_source"],
            "/slots: 1 of 1 slot speculative; launch record: --spec-type draft-mtp "
            "--spec-draft-n-max 4");
  EXPECT_EQ(doc["settings"]["spec-type"], "draft-mtp");
  EXPECT_EQ(doc["settings"]["spec-draft-n-max"], "4");
  EXPECT_EQ(doc["settings"]["props:params.speculative.n_max"], "4");
  EXPECT_EQ(doc["roofline"]["available"], true);
  EXPECT_EQ(doc["roofline"]["bytes_source"], "launch record");
  const json saved_probe = json::parse(testing::read_text(state / "probe.json"));
  const double bandwidth = doc["roofline"]["bandwidth_bytes_per_second"];
  EXPECT_DOUBLE_EQ(
      bandwidth,
      saved_probe["bandwidth"]["result"]["cases"][0]["gbps"]["median"].get<double>() * 1e9);
  EXPECT_NEAR(bandwidth, 237e9, 237e9 * 0.02);
  const double mean_len = doc["levels"][0]["metrics"]["mean_accepted_length"]["median"];
  EXPECT_NEAR(doc["roofline"]["ceiling_tps"].get<double>(), mean_len * bandwidth / 16.8e9, 1e-9);
  // Saved where compare finds it, identical to what was printed.
  const auto saved = state / "bench" / "mtp-n4.json";
  EXPECT_EQ(testing::read_text(saved), result.out);
  EXPECT_NE(result.err.find("result saved as mtp-n4"), std::string::npos);

  // A run compared with itself: no significant difference.
  const auto compare =
      run_cli_on("gb10", {"bench", "compare", "mtp-n4", saved.string()}, state_env(dir));
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("result: no significant difference"), std::string::npos)
      << compare.out;
  EXPECT_NE(compare.out.find("settings: the same in both runs"), std::string::npos);
}

TEST(CliBenchServer, RooflineOfASplitModelCountsEveryShard) {
  testing::TempDir dir;
  testing::GgufWriter first = testing::report_model(64, 0);
  first.add("split.no", testing::gguf_uint16(0)).add("split.count", testing::gguf_uint16(2));
  first.tensor("output.weight", {5120, 1000}, gguf::GgmlType::q8_0);
  first.write(dir.path() / "m-00001-of-00002.gguf");
  testing::GgufWriter second;
  second.add("split.no", testing::gguf_uint16(1)).add("split.count", testing::gguf_uint16(2));
  second.tensor("blk.0.ffn_down.weight", {5120, 17408}, gguf::GgmlType::q4_k);
  second.write(dir.path() / "m-00002-of-00002.gguf");
  FakeServer server;
  make_speculative(server);
  const std::string model = (dir.path() / "m-00001-of-00002.gguf").string();
  const auto result =
      run_cli_on("gb10",
                 {"bench", "server", "--url", "http://h:1", "--samples", "1", "--warmup", "0",
                  "--bandwidth", "237", "--model", model, "--json"},
                 {}, {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["roofline"]["bytes_per_token"],
            5120ull * 1000 / 32 * 34 + 5120ull * 17408 / 256 * 144);

  std::filesystem::remove(dir.path() / "m-00002-of-00002.gguf");
  const auto missing = run_cli_on("gb10",
                                  {"bench", "server", "--url", "http://h:1", "--samples", "1",
                                   "--bandwidth", "237", "--model", model},
                                  {}, {}, with(server));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("m-00002-of-00002.gguf"), std::string::npos) << missing.err;
}

// An MTP run and a plain run of the same model, each started by launch: compare names
// spec-type as the one setting that differs (the text said "speculative decoding off" for
// both before /slots was read).
TEST(CliBenchServer, CompareOfAnMtpRunWithAPlainRunListsSpecType) {
  testing::TempDir dir;
  const auto state = dir.path() / "state" / "gb10tune";
  std::filesystem::create_directories(state);
  const auto run = [&](bool mtp, const std::string& name) {
    launch::LaunchRecord record;
    record.pid = 4242;
    record.url = "http://127.0.0.1:9931";
    record.model_path = "/models/qwen.gguf";
    record.argv = {"/opt/llama-server", "-m", "/models/qwen.gguf", "-np", "3", "-kvu"};
    if (mtp) {
      record.argv.insert(record.argv.end(),
                         {"--spec-type", "draft-mtp", "--spec-draft-n-max", "4"});
    }
    EXPECT_TRUE(launch::write_launch_record(state / "launch.json", record).ok());
    FakeServer server;
    make_speculative(server);
    server.info.slots_reported = 3;
    server.info.slots_speculative = mtp ? 3 : 0;
    if (!mtp) {
      server.timings = [](int, const std::string&) { return make_timings(500, 300, 100, 20); };
    }
    const auto result = run_cli_on("gb10", {"bench", "server", "--samples", "3", "--save", name},
                                   state_env(dir), {}, with(server));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  };
  const std::string mtp_text = run(true, "mtp");
  EXPECT_NE(mtp_text.find("speculative decoding draft-mtp, n-max 4 (/slots: 3 of 3 slots "
                          "speculative; launch record: --spec-type draft-mtp "
                          "--spec-draft-n-max 4)"),
            std::string::npos)
      << mtp_text;
  const std::string plain_text = run(false, "plain");
  EXPECT_NE(plain_text.find("speculative decoding off (/slots: 0 of 3 slots speculative; "
                            "launch record: no --spec-type)"),
            std::string::npos)
      << plain_text;
  const auto compare = run_cli_on("gb10", {"bench", "compare", "plain", "mtp"}, state_env(dir));
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("settings: one differs\n  spec-type: none → draft-mtp\n"),
            std::string::npos)
      << compare.out;
}

TEST(CliBenchServer, ConcurrencyTableShowsPerSessionAndTotal) {
  FakeServer server;
  make_speculative(server);
  server.delay = std::chrono::milliseconds(5);
  server.timings = [](int, const std::string&) { return make_timings(500, 300, 100, 11); };
  const auto result = run_cli_on("gb10",
                                 {"bench", "server", "--url", "http://h:1", "--samples", "2",
                                  "--warmup", "0", "--concurrency", "1,2,3"},
                                 {}, {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(server.requests.size(), 2u + 4u + 6u);
  EXPECT_NE(result.out.find("concurrency (K10)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("       2             11.0        22.0 [22.0, 22.0]"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("       3             11.0        33.0 [33.0, 33.0]"),
            std::string::npos)
      << result.out;
}

TEST(CliBenchServer, FailedRequestExitsOneAndSavesNothing) {
  testing::TempDir dir;
  FakeServer server;
  make_speculative(server);
  server.fail_at = 3;
  const auto result = run_cli_on("gb10", {"bench", "server", "--url", "http://h:1", "--save", "x"},
                                 state_env(dir), {}, with(server));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("request cli-readme/4 (session 1 of 1) failed"), std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state" / "gb10tune" / "bench" / "x.json"));
}

// A workload whose second turn is longer than the server's slot (1024 tokens).
std::string long_turn_workload() {
  const std::string short_text(100, 'a');
  const std::string long_text(4000, 'b');
  return json{{"conversation", "long-essay"},
              {"max_tokens", 64},
              {"turns", {{{"user", short_text}, {"assistant", short_text}}, {{"user", long_text}}}}}
             .dump() +
         "\n";
}

TEST(CliBenchServer, ARequestLongerThanTheSlotIsLeftOutBeforeTheFirstRequest) {
  testing::TempDir dir;
  const auto prompts = dir.write("long.jsonl", long_turn_workload());
  FakeServer server;
  make_speculative(server);
  server.info.n_ctx_per_slot = 1024;
  const auto result = run_cli_on(
      "gb10",
      {"bench", "server", "--url", "http://h:1", "--prompts", prompts.string(), "--warmup", "0"},
      state_env(dir), {}, with(server));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  // This server cannot count tokens: turn 2 is estimated at (100 + 100 + 4000) / 4 + 3 messages
  // × 8 + 64 = 1138 tokens, and left out.
  EXPECT_NE(result.err.find("estimated at 4 characters per token"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("1 of 2 requests left out: longer than the server's slot of 1024 "
                            "tokens (their prompt, estimated, and max_tokens"),
            std::string::npos)
      << result.err;
  ASSERT_EQ(server.requests.size(), 1u);
  EXPECT_EQ(server.requests[0].find(std::string(4000, 'b')), std::string::npos);
}

TEST(CliBenchServer, TheServersTokenCountsDecideWhatFitsTheSlot) {
  testing::TempDir dir;
  const auto prompts = dir.write("long.jsonl", long_turn_workload());
  FakeServer server;
  make_speculative(server);
  server.info.n_ctx_per_slot = 1024;
  // One token per byte: the first turn (200 characters) needs 264 tokens with its 64 to
  // generate, the second 4264.
  server.count_prompt = [](const json& body) -> Expected<std::uint64_t> {
    std::uint64_t bytes = 0;
    for (const auto& message : body["messages"]) {
      bytes += message["content"].get<std::string>().size();
    }
    return bytes;
  };
  const auto result = run_cli_on("gb10",
                                 {"bench", "server", "--url", "http://h:1", "--prompts",
                                  prompts.string(), "--warmup", "0", "--json"},
                                 state_env(dir), {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("estimated"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("1 of 2 requests left out: longer than the server's slot of 1024 "
                            "tokens (their prompt, counted by the server's tokenizer"),
            std::string::npos)
      << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["workload"]["requests"], 1) << doc["workload"];
}

TEST(CliBenchServer, NoRequestThatFitsTheSlotIsAnErrorBeforeTheFirstRequest) {
  testing::TempDir dir;
  const auto prompts = dir.write("long.jsonl", long_turn_workload());
  FakeServer server;
  make_speculative(server);
  server.info.n_ctx_per_slot = 64;
  const auto result =
      run_cli_on("gb10", {"bench", "server", "--url", "http://h:1", "--prompts", prompts.string()},
                 state_env(dir), {}, with(server));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(server.requests.empty()) << server.requests.size();
  EXPECT_NE(
      result.err.find("no request of " + prompts.string() + " fits the server's slot of 64 tokens"),
      std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("fewer slots with -np"), std::string::npos) << result.err;
}

TEST(CliBenchServer, MaxContextTrimsTheWorkloadToTheSlot) {
  testing::TempDir dir;
  const auto prompts = dir.write("long.jsonl", long_turn_workload());
  FakeServer server;
  make_speculative(server);
  server.info.n_ctx_per_slot = 1024;
  const auto result = run_cli_on("gb10",
                                 {"bench", "server", "--url", "http://h:1", "--prompts",
                                  prompts.string(), "--max-context", "1024", "--warmup", "0"},
                                 state_env(dir), {}, with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("--max-context 1024: 1 of 2 requests left out"), std::string::npos)
      << result.err;
  ASSERT_EQ(server.requests.size(), 1u);
  EXPECT_EQ(server.requests[0].find(std::string(4000, 'b')), std::string::npos);
}

// --- bench compare ---------------------------------------------------------------------------

void save(const testing::TempDir& dir, const std::string& name,
          const bench::ServerBenchResult& result) {
  dir.write("state/gb10tune/bench/" + name + ".json", bench::result_to_json(result).dump(2));
}

bench::ServerBenchResult golden_n3() {
  return testing::make_result({20.1, 20.5, 20.3, 20.8, 20.4, 20.6, 20.2, 20.7, 20.5, 20.4},
                              {309, 310, 308, 311, 309.5}, {170, 180, 175}, 3);
}

bench::ServerBenchResult golden_n4() {
  return testing::make_result({23.5, 23.9, 23.6, 23.8, 23.7, 24.0, 23.4, 23.7, 23.9, 23.6},
                              {309, 310, 308, 311, 309.5}, {185, 195, 190}, 4);
}

// Runs of other requests (another workload): the medians' rule.
TEST(CliBenchCompare, TextMatchesGolden) {
  testing::TempDir dir;
  save(dir, "n3", golden_n3());
  save(dir, "n4", testing::with_other_requests(golden_n4()));
  const auto result = run_cli_on("gb10", {"bench", "compare", "n3", "n4"}, state_env(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("bench-compare.txt", result.out);
}

// The same requests in the same order: paired, the ratio and its interval on every row.
TEST(CliBenchCompare, PairedTextMatchesGolden) {
  testing::TempDir dir;
  save(dir, "n3", golden_n3());
  save(dir, "n4", golden_n4());
  const auto result = run_cli_on("gb10", {"bench", "compare", "n3", "n4"}, state_env(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("bench-compare-paired.txt", result.out);
  EXPECT_NE(result.out.find("paired over 10 requests"), std::string::npos) << result.out;

  const auto js = run_cli_on("gb10", {"bench", "compare", "n3", "n4", "--json"}, state_env(dir));
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const json doc = json::parse(js.out);
  EXPECT_EQ(doc["paired_requests"], 10);
  const json& decode = doc["metrics"][1];
  EXPECT_EQ(decode["metric"], "decode");
  EXPECT_EQ(decode["paired"]["pairs"], 10);
  EXPECT_EQ(decode["paired"]["verdict"], "better");
  EXPECT_GT(decode["paired"]["ratio_low"].get<double>(), 1.05);  // 3% run noise per run counted
  EXPECT_EQ(decode["verdict"], "better");
  // Unpaired: the document has no paired fields.
  save(dir, "other", testing::with_other_requests(golden_n4()));
  const auto plain =
      run_cli_on("gb10", {"bench", "compare", "n3", "other", "--json"}, state_env(dir));
  const json unpaired = json::parse(plain.out);
  EXPECT_FALSE(unpaired.contains("paired_requests"));
  EXPECT_FALSE(unpaired["metrics"][1].contains("paired"));
}

// Other requests at the headline, the same at concurrency 2: only that level's rows pair.
TEST(CliBenchCompare, PartlyPairedSaysWhichRuleEachRowFollows) {
  testing::TempDir dir;
  auto a = golden_n3();
  auto b = testing::with_other_requests(golden_n4());
  testing::add_level(a, 2, {11.0, 11.1, 10.9, 11.0, 11.2, 10.8});
  testing::add_level(b, 2, {13.2, 13.32, 13.08, 13.2, 13.44, 12.96});
  save(dir, "a", a);
  save(dir, "b", b);
  const auto result = run_cli_on("gb10", {"bench", "compare", "a", "b"}, state_env(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("paired over"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("(rows with B/A)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("rows without B/A did not pair"), std::string::npos) << result.out;
  // per-session decode @2: each request 20% faster; the interval counts 3% of run-to-run noise
  // per run (t_5 · sqrt(2 · 0.03²) = ±0.109 in the log).
  EXPECT_NE(result.out.find("+20.0%     1.200 [1.076, 1.338]  better"), std::string::npos)
      << result.out;
}

TEST(CliBenchCompare, SeveralChangedSettingsWarn) {
  testing::TempDir dir;
  auto a = testing::make_result({20, 21, 22}, {300}, {}, 3);
  auto b = testing::make_result({20, 21, 22}, {300}, {}, 4);
  b.provenance.settings["argv:-np"] = "2";
  save(dir, "a", a);
  save(dir, "b", b);
  const auto text = run_cli_on("gb10", {"bench", "compare", "a", "b"}, state_env(dir));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("warning: the runs differ in 2 settings"), std::string::npos) << text.out;
  const auto js = run_cli_on("gb10", {"bench", "compare", "a", "b", "--json"}, state_env(dir));
  ASSERT_EQ(js.exit_code, 0);
  const json doc = json::parse(js.out);
  EXPECT_EQ(doc["command"], "bench compare");
  EXPECT_EQ(doc["significant"], false);
  EXPECT_EQ(doc["setting_differences"].size(), 2u);
  EXPECT_EQ(doc["metrics"][1]["verdict"], "no significant difference");
  EXPECT_NE(js.err.find("warning:"), std::string::npos);
}

TEST(CliBenchCompare, IntervalsSayTheirRealConfidence) {
  testing::TempDir dir;
  save(dir, "a", testing::make_result({20.1, 20.5, 20.3}, {300, 301}, {}, 3));
  save(dir, "b", testing::make_result({23.5, 23.9}, {300, 301}, {}, 4));
  const auto result = run_cli_on("gb10", {"bench", "compare", "a", "b"}, state_env(dir));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("95% interval"), std::string::npos) << result.out;
  // decode: n = 3 in A (75%), n = 2 in B (50%); fully apart, but too few samples to judge.
  EXPECT_NE(result.out.find("20.3 [20.1, 20.5] 75%"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("23.7 [23.5, 23.9] 50%"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("too few samples"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("result: no significant difference"), std::string::npos);
}

TEST(CliBenchServer, TextSaysTheIntervalsRealConfidence) {
  FakeServer server;
  make_speculative(server);
  const auto result = run_cli_on(
      "gb10", {"bench", "server", "--url", "http://h:1", "--samples", "2", "--warmup", "0"}, {}, {},
      with(server));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("95% distribution-free interval"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("conf"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(" 50% "), std::string::npos) << result.out;  // n = 2
}

TEST(CliBenchServer, SaveNeverReplacesAResultWithoutForce) {
  testing::TempDir dir;
  save(dir, "base", testing::make_result({20}, {300}));
  const auto saved = dir.path() / "state" / "gb10tune" / "bench" / "base.json";
  const std::string before = testing::read_text(saved);
  FakeServer server;
  make_speculative(server);
  const std::vector<std::string> args{"bench",     "server", "--url",  "http://h:1",
                                      "--samples", "1",      "--save", "base"};
  const auto refused = run_cli_on("gb10", args, state_env(dir), {}, with(server));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(saved.string()), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_TRUE(server.requests.empty());  // refused before the run
  EXPECT_EQ(testing::read_text(saved), before);

  std::vector<std::string> forced = args;
  forced.push_back("--force");
  const auto replaced = run_cli_on("gb10", forced, state_env(dir), {}, with(server));
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(testing::read_text(saved), before);
}

TEST(CliBenchCompare, MissingOrBrokenResultsAreUsageErrors) {
  testing::TempDir dir;
  save(dir, "base", testing::make_result({20}, {300}));
  const auto broken = dir.write("broken.json", "{");
  const auto missing = run_cli_on("gb10", {"bench", "compare", "base", "nope"}, state_env(dir));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no saved result 'nope'"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("saved: base"), std::string::npos) << missing.err;
  const auto bad =
      run_cli_on("gb10", {"bench", "compare", "base", broken.string()}, state_env(dir));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("is not valid JSON"), std::string::npos) << bad.err;
  const auto one = run_cli_on("gb10", {"bench", "compare", "base"}, state_env(dir));
  EXPECT_EQ(one.exit_code, 2);
}

}  // namespace
}  // namespace gb10tune
