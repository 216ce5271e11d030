// `bench server` end to end over HTTP against the stand-in llama-server: the figures in the
// result are exactly the `timings` the server sent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "cli/context.hpp"
#include "gb10tune/http/http_client.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string url_of(int port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

platform::Environment stand_in_state_env(const TempDir& dir) {
  platform::Environment env;
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  env.set("HOME", dir.path().string());
  return env;
}

json timings_json(double prompt_n, double prompt_ms, double predicted_n, double predicted_ms,
                  double draft_n, double accepted) {
  return {{"cache_n", 0},
          {"prompt_n", prompt_n},
          {"prompt_ms", prompt_ms},
          {"prompt_per_second", prompt_n / prompt_ms * 1000},
          {"predicted_n", predicted_n},
          {"predicted_ms", predicted_ms},
          {"predicted_per_second", predicted_n / predicted_ms * 1000},
          {"draft_n", draft_n},
          {"draft_n_accepted", accepted}};
}

TEST(CliBenchServerStandIn, NothingListeningIsExitOneNamingTheUrl) {
  const int port = free_tcp_port();
  const auto result = run_cli_on("gb10", {"bench", "server", "--url", url_of(port)}, {});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("gb10tune bench server: no llama-server answers at " + url_of(port)),
            std::string::npos)
      << result.err;
}

TEST(CliBenchServerStandIn, LoadingServerIsExitOneWithAHint) {
  const int port = free_tcp_port();
  StandInServer server({"--port", std::to_string(port)}, {{"STANDIN_LOAD_MS", "20000"}});
  // Bound at once, loading for 20 s: wait for the first (503) answer.
  bool bound = false;
  for (int i = 0; i < 100 && !bound; ++i) {
    bound = http::http_get(http::Url{"http", "127.0.0.1", port, ""}, "/health", 200ms).has_value();
    if (!bound) {
      std::this_thread::sleep_for(50ms);
    }
  }
  ASSERT_TRUE(bound) << server.log();
  const auto result = run_cli_on("gb10", {"bench", "server", "--url", url_of(port)}, {});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("is still loading its model"), std::string::npos) << result.err;
}

TEST(CliBenchServerStandIn, FiguresAreExactlyWhatTheServerReported) {
  TempDir dir;
  // Five answers used in turn: the warm-up gets the first, the four samples the others.
  const json answers = json::array({timings_json(700, 2300, 128, 5400, 132, 89),
                                    timings_json(812, 2650.5, 256, 10811.2, 260, 170),
                                    timings_json(64, 210.25, 200, 8200, 190, 131),
                                    timings_json(1500, 4900, 180, 7702.9, 185, 122),
                                    timings_json(300, 980, 256, 10400, 270, 181)});
  const auto timings_file = dir.write("timings.json", answers.dump());
  const int port = free_tcp_port();
  StandInServer server({"--port", std::to_string(port), "-m", "/models/q.gguf", "--spec-type",
                        "draft-mtp", "-c", "16384", "-np", "1"},
                       {{"STANDIN_TIMINGS", timings_file.string()}, {"STANDIN_LOAD_MS", "50"}});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto result = run_cli_on(
      "gb10",
      {"bench", "server", "--url", url_of(port), "--samples", "4", "--json", "--save", "standin",
       "--bandwidth", "200", "--model", fixture("gguf/missing.gguf").string()},
      stand_in_state_env(dir));
  // --model names a missing file: a usage error before anything is sent.
  EXPECT_EQ(result.exit_code, 2) << result.err;

  const auto run = run_cli_on(
      "gb10",
      {"bench", "server", "--url", url_of(port), "--samples", "4", "--json", "--save", "standin"},
      stand_in_state_env(dir));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  const json& samples = doc["levels"][0]["samples"];
  ASSERT_EQ(samples.size(), 4u);
  std::vector<double> decode;
  for (std::size_t i = 0; i < 4; ++i) {
    const json& sent = answers[i + 1];
    const json& got = samples[i]["timings"];
    for (const char* field :
         {"prompt_n", "prompt_ms", "prompt_per_second", "predicted_n", "predicted_ms",
          "predicted_per_second", "draft_n", "draft_n_accepted", "cache_n"}) {
      EXPECT_EQ(got[field].get<double>(), sent[field].get<double>()) << field;
    }
    decode.push_back(sent["predicted_per_second"].get<double>());
  }
  std::sort(decode.begin(), decode.end());
  const json& metrics = doc["levels"][0]["metrics"];
  EXPECT_DOUBLE_EQ(metrics["decode_tps"]["median"].get<double>(), (decode[1] + decode[2]) / 2);
  EXPECT_DOUBLE_EQ(metrics["decode_tps"]["min"].get<double>(), decode[0]);
  EXPECT_DOUBLE_EQ(metrics["decode_tps"]["max"].get<double>(), decode[3]);
  // Time to first token is the server's prompt_ms: 2650.5 210.25 4900 980 → median 1815.25.
  EXPECT_DOUBLE_EQ(metrics["ttft_ms"]["median"].get<double>(), (980 + 2650.5) / 2);
  // Acceptance 170/260 131/190 122/185 181/270; mean length 256/86 200/69 180/58 256/75.
  std::vector<double> acceptance{170.0 / 260, 131.0 / 190, 122.0 / 185, 181.0 / 270};
  std::sort(acceptance.begin(), acceptance.end());
  EXPECT_DOUBLE_EQ(metrics["acceptance_rate"]["median"].get<double>(),
                   (acceptance[1] + acceptance[2]) / 2);
  std::vector<double> mean_len{256.0 / 86, 200.0 / 69, 180.0 / 58, 256.0 / 75};
  std::sort(mean_len.begin(), mean_len.end());
  EXPECT_DOUBLE_EQ(metrics["mean_accepted_length"]["median"].get<double>(),
                   (mean_len[1] + mean_len[2]) / 2);
  // Provenance from /props, and from /slots what the server runs: /props' speculative.types
  // is the request default "none" (as in 3f545be) though the server drafts.
  EXPECT_EQ(doc["server"]["model_path"], "/models/q.gguf");
  EXPECT_EQ(doc["server"]["speculative"], true);
  EXPECT_EQ(doc["server"]["spec_source"], "/slots: 1 of 1 slot speculative");
  EXPECT_EQ(doc["server"]["n_ctx_per_slot"], 16384);
  EXPECT_FALSE(doc["server"]["build_info"].get<std::string>().empty());
  EXPECT_EQ(doc["server"]["props"]["default_generation_settings"]["params"]["speculative.types"],
            "none");
  EXPECT_FALSE(doc["settings"].contains("props:params.speculative.types"));
  EXPECT_EQ(doc["settings"]["spec-type"], "on (type not reported)");

  // The saved run compared with itself: no significant difference.
  const auto compare =
      run_cli_on("gb10", {"bench", "compare", "standin", "standin"}, stand_in_state_env(dir));
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("result: no significant difference"), std::string::npos)
      << compare.out;
}

// A server started by hand (no launch record): its own command line says which type and
// depth it drafts with, /slots that it does.
TEST(CliBenchServerStandIn, ServerStartedByHandIsDescribedByItsCommandLine) {
  TempDir dir;
  const int port = free_tcp_port();
  StandInServer server({"--port", std::to_string(port), "-np", "1", "--spec-type", "draft-mtp",
                        "--spec-draft-n-max", "4"},
                       {{"STANDIN_LOAD_MS", "50"}});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto run = run_binary(
      {"bench", "server", "--url", url_of(port), "--samples", "1", "--warmup", "0", "--json"},
      {"XDG_STATE_HOME=" + (dir.path() / "state").string()});
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const json doc = json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(doc["server"]["spec_type"], "draft-mtp");
  EXPECT_EQ(doc["server"]["spec_draft_n_max"], 4);
  EXPECT_EQ(doc["server"]["spec_source"],
            "/slots: 1 of 1 slot speculative; the server's command line: --spec-type draft-mtp "
            "--spec-draft-n-max 4");
}

TEST(CliBenchServerStandIn, ConcurrentSessionsOverlapAndAddUp) {
  TempDir dir;
  const auto timings_file =
      dir.write("timings.json", json::array({timings_json(500, 1600, 100, 9000, 0, 0)}).dump());
  const int port = free_tcp_port();
  StandInServer server({"--port", std::to_string(port), "-np", "3"},
                       {{"STANDIN_TIMINGS", timings_file.string()},
                        {"STANDIN_RESPONSE_DELAY_MS", "600"},
                        {"STANDIN_LOAD_MS", "50"}});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_cli_on(
      "gb10",
      {"bench", "server", "--url", url_of(port), "--samples", "2", "--warmup", "0", "--concurrency",
       "3", "--json"},
      {}, {}, [](cli::Context& ctx) {
        ctx.clock_seconds = [] {
          return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
              .count();
        };
      });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Two rounds of three parallel 600 ms requests take 1.2 s; the six one after another 3.6 s.
  // The bound leaves a slow machine (an emulator, a loaded CI runner) 1.2 s of overhead.
  EXPECT_LT(seconds, 2.4);
  const json level = json::parse(run.out)["levels"][0];
  EXPECT_EQ(level["concurrency"], 3);
  EXPECT_EQ(level["samples"].size(), 6u);
  const double rate = 100 / 9000.0 * 1000;
  EXPECT_DOUBLE_EQ(level["per_session_decode_tps"]["median"].get<double>(), rate);
  EXPECT_NEAR(level["total_decode_tps"]["median"].get<double>(), 3 * rate, 1e-9);
  EXPECT_GT(level["client_wall_seconds"].get<double>(), 0.29);  // client-timed, separate
  // No drafting reported: no acceptance figures.
  EXPECT_EQ(level["metrics"]["acceptance_rate"]["count"], 0);
}

}  // namespace
}  // namespace gb10tune::testing
