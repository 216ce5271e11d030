// What a real llama-server (CPU build of commit 3f545be, tests/fixtures/llama-server/tune/)
// answered where tune relies on it: its /props lists no speculative field a request may set (so
// every knob is a restart), "cache_prompt": false makes a repeated request process its whole
// prompt (what --goal prefill sends), and it started with the options tune's settings emit.
#include <gtest/gtest.h>

#include <algorithm>

#include "gb10tune/bench/server_metrics.hpp"
#include "gb10tune/http/server_api.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/tune/knobs.hpp"
#include "gb10tune/tune/tune_result.hpp"
#include "gb10tune/tune/tune_runner.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::tune {
namespace {

std::string tune_capture(const std::string& name) {
  return testing::read_text(testing::fixture("llama-server/tune/" + name));
}

TEST(TuneCaptured, ThisBuildTakesNoKnobPerRequest) {
  const auto props = nlohmann::json::parse(tune_capture("props.json"));
  const auto parsed = http::parse_props(props.dump());
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->build_info, "b0-unknown");
  EXPECT_EQ(parsed->n_ctx_per_slot, 4096u);
  int with_field = 0;
  for (const Knob& knob : knob_table()) {
    if (!knob.request_field.empty()) {
      ++with_field;
      EXPECT_FALSE(accepts_per_request(knob, props)) << knob.setting;
    }
  }
  EXPECT_GT(with_field, 0) << "no knob names a request field: nothing was checked";
  // The field it does list is a default, not a knob.
  EXPECT_TRUE(props["default_generation_settings"]["params"].contains("speculative.types"));
}

TEST(TuneCaptured, UncachedRequestsProcessTheWholePromptEachTime) {
  const auto timings = [](const std::string& name) {
    const auto parsed = http::parse_completion_timings(tune_capture(name + ".json"));
    EXPECT_TRUE(parsed) << name;
    return parsed.value_or(http::Timings{});
  };
  const http::Timings cached = timings("completion-cached-2");
  const http::Timings first = timings("completion-uncached-1");
  const http::Timings again = timings("completion-uncached-2");
  // The repeated request comes from the cache by default: its time to first token says nothing
  // about prefill.
  EXPECT_LT(cached.prompt_n, 10);
  EXPECT_GT(cached.cache_n.value_or(0), 800);
  EXPECT_EQ(first.prompt_n, again.prompt_n);
  EXPECT_EQ(again.cache_n.value_or(-1), 0);
  EXPECT_GT(again.prompt_ms, 10 * cached.prompt_ms / cached.prompt_n);
  // So the prefill goal sends the field with every request.
  EXPECT_EQ(request_fields({}, nlohmann::json::object(), Goal::prefill).value("cache_prompt", true),
            false);
}

TEST(TuneCaptured, AnUnknownPerRequestFieldIsIgnoredNotRefused) {
  const auto parsed = http::parse_completion_timings(tune_capture("completion-n-max.json"));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_GT(parsed->predicted_n, 0);
}

TEST(TuneCaptured, TheBuildStartedWithTheOptionsTuneEmits) {
  const auto model = testing::describe(testing::tiny_qwen35_model());
  ASSERT_TRUE(model);
  const launch::LaunchSettings settings = launch::LaunchSettings::resolve(
      {{"command line", {{"threads", 2}, {"draft_p_min", 0.5}, {"ubatch", 256}}}});
  launch::CommandInputs inputs;
  inputs.server_path = "llama-server";
  inputs.model_path = "/models/tiny-qwen35.gguf";
  const auto built = launch::build_server_command(
      settings, *model,
      server::ServerFlags::parse_help(
          testing::read_text(testing::fixture("llama-server/help-2026-08-commit-3f545be.txt"))),
      inputs);
  ASSERT_TRUE(built) << built.error().message;
  const std::string captured = tune_capture("command.txt");
  for (const char* option : {"--spec-draft-p-min", "--threads", "-ub", "--spec-draft-n-max"}) {
    const auto it = std::find(built->argv.begin(), built->argv.end(), option);
    ASSERT_NE(it, built->argv.end()) << option;
    EXPECT_TRUE(testing::contains(captured, std::string(option) + " " + *(it + 1) + " "))
        << option << " " << *(it + 1) << " not in: " << captured;
  }
  // And it loaded: the MTP draft context was created and the model served.
  const std::string log = tune_capture("server.log");
  EXPECT_TRUE(testing::contains(log, "creating MTP draft context")) << log;
  EXPECT_TRUE(testing::contains(log, "model loaded")) << log;
  EXPECT_FALSE(testing::contains(log, "invalid argument")) << log;
}

// A measurement of a captured tune document's candidate or start, read back as tune reads its
// journal.
Measurement h200_measurement(const nlohmann::json& doc) {
  Measurement m;
  std::string error;
  EXPECT_TRUE(measurement_from_json(doc, m, error)) << error;
  return m;
}

// b's values in a's request order (the pairs bench/paired compares).
std::vector<double> h200_values_in_order(const Measurement& a, const Measurement& b) {
  std::vector<double> out;
  for (const std::string& request : a.requests) {
    const auto it = std::find(b.requests.begin(), b.requests.end(), request);
    out.push_back(it == b.requests.end() ? 0 : b.values[it - b.requests.begin()]);
  }
  return out;
}

// The exhaustive grid against the coordinate search on the same H200 server (docs/tune.md, "On
// an NVIDIA H200"): the grid's best is the configuration with the highest paired ratio to the
// start; tune's winner, as the grid measured it, must not be worse than that best beyond the
// noise, and tune must have taken at most a third of the grid's time.
void expect_tune_within_the_grids_noise(const std::string& experiment) {
  const auto coordinate =
      nlohmann::json::parse(tune_capture("h200/" + experiment + "-coordinate.json"));
  const auto grid = nlohmann::json::parse(tune_capture("h200/" + experiment + "-grid.json"));
  ASSERT_EQ(grid.value("strategy", ""), "grid");
  const Measurement start = h200_measurement(grid.at("start"));
  std::vector<Measurement> measured{start};
  for (const nlohmann::json& doc : grid.at("candidates")) {
    CandidateResult result;
    std::string error;
    ASSERT_TRUE(candidate_result_from_json(doc, result, error)) << error;
    if (!result.measured.values.empty()) {
      measured.push_back(result.measured);
    }
  }
  std::size_t combinations = 1;
  for (const nlohmann::json& knob : grid.at("knobs")) {
    if (knob.value("skipped", "").empty() && knob.at("values").size() > 1) {
      combinations *= knob.at("values").size();
    }
  }
  EXPECT_EQ(measured.size(), combinations) << "the grid measured every combination";
  const auto against_start = [&](const Measurement& m) {
    return bench::compare_paired(start.values, h200_values_in_order(start, m), true).ratio;
  };
  const Measurement& best = *std::max_element(measured.begin(), measured.end(),
                                              [&](const Measurement& l, const Measurement& r) {
                                                return against_start(l) < against_start(r);
                                              });
  const nlohmann::json won = coordinate.at("winner").at("settings");
  const auto tuned = std::find_if(measured.begin(), measured.end(),
                                  [&](const Measurement& m) { return m.settings == won; });
  ASSERT_NE(tuned, measured.end()) << "tune's winner " << won.dump() << " is not in the grid";
  const bench::PairedComparison gap =
      bench::compare_paired(best.values, h200_values_in_order(best, *tuned), true);
  EXPECT_NE(gap.verdict, bench::Verdict::worse)
      << won.dump() << " against the grid's best " << best.settings.dump() << ": " << gap.ratio
      << " [" << gap.ratio_low << ", " << gap.ratio_high << "]";
  EXPECT_LE(coordinate.at("elapsed_s").get<double>(), grid.at("elapsed_s").get<double>() / 3);
}

TEST(TuneCaptured, OnTheH200TheMtpModelsWinnerIsWithinTheGridsNoiseInAThirdOfItsTime) {
  expect_tune_within_the_grids_noise("mtp");
}

TEST(TuneCaptured, OnTheH200TheDenseModelsWinnerIsWithinTheGridsNoiseInAThirdOfItsTime) {
  expect_tune_within_the_grids_noise("dense");
}

}  // namespace
}  // namespace gb10tune::tune
