// The compute buffer of multi-head latent attention (deepseek2) against a real llama-server as
// the head count grows: tests/fixtures/llama-server/memory/mla-heads.json, DeepSeek-V3's head
// sizes with 4 to 128 heads (capture_mla.py), where the attention part of the graph scales
// with the heads and the rest stays put.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::plan {
namespace {

using nlohmann::json;

constexpr double kMlaMiB = 1048576.0;

json mla_fixture() {
  const auto text = read_text_file(testing::fixture("llama-server/memory/mla-heads.json"));
  EXPECT_TRUE(text) << "cannot read mla-heads.json";
  return text ? json::parse(*text) : json::object();
}

// The plan's compute buffer for one captured CPU run, in MiB.
double planned_cpu_compute_mib(const model::ModelFacts& facts, const json& config) {
  const auto plan = make_plan(facts, testing::captured_plan_config(config), {});
  EXPECT_TRUE(plan) << plan.error().message;
  return plan ? static_cast<double>(plan->buffers.main.compute_host) / kMlaMiB : 0.0;
}

// Every run within 2 MiB or 1% (the graph's fixed part: masks, positions, the latent's own
// rows), and what the heads add within 1 MiB: between two head counts (32 and up) of the same
// settings the plan grows by the logged difference (168 to 2215 MiB) ± 1 MiB, where ggml-alloc
// places a fixed-size tensor one block differently. Below 32 heads the V copy and the reuse of
// freed blocks shift the fixed part by up to 2 MiB.
TEST(MlaCompute, TheCpuComputeBufferGrowsWithTheHeadsAsPlanned) {
  const json fixture = mla_fixture();
  ASSERT_TRUE(fixture.contains("cases"));
  std::map<std::string, model::ModelFacts> models;
  for (const auto& [name, description] : fixture.at("models").items()) {
    const auto facts = testing::describe(testing::captured_header(description), name + ".gguf");
    ASSERT_TRUE(facts) << name << ": " << facts.error().message;
    ASSERT_TRUE(facts->mla) << name;
    EXPECT_EQ(facts->mla_latent_width, 512u) << name;
    EXPECT_EQ(facts->mla_q_width, 192u) << name;
    models.emplace(name, *facts);
  }
  // settings -> heads -> (planned, logged)
  std::map<std::string, std::map<std::uint32_t, std::pair<double, double>>> by_settings;
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    if (c.at("config").at("backend").get<std::string>() != "cpu") {
      continue;
    }
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name + ": " + c.at("args").get<std::string>());
    const model::ModelFacts& facts = models.at(c.at("model").get<std::string>());
    const double planned = planned_cpu_compute_mib(facts, c.at("config"));
    const double logged = c.at("log").at("compute_mib").at("CPU").get<double>();
    EXPECT_NEAR(planned, logged, std::max(2.0, 0.01 * logged));
    const std::uint32_t heads = facts.layers.at(0).head_count;
    by_settings[c.at("args").get<std::string>()][heads] = {planned, logged};
    ++checked;
  }
  EXPECT_EQ(checked, 24);
  for (const auto& [settings, runs] : by_settings) {
    SCOPED_TRACE(settings);
    EXPECT_EQ(runs.size(), 6u);
    for (auto it = runs.lower_bound(32); it != runs.end() && std::next(it) != runs.end(); ++it) {
      const auto& [planned_low, logged_low] = it->second;
      const auto& [planned_high, logged_high] = std::next(it)->second;
      EXPECT_NEAR(planned_high - planned_low, logged_high - logged_low, 1.0 + 1e-6)
          << it->first << " to " << std::next(it)->first << " heads";
    }
  }
}

}  // namespace
}  // namespace gb10tune::plan
