// launch's fit over the real plan: what it may lower follows the fit setting and where each
// value came from, its configurations are the ones launch builds, and what it lowered becomes
// the settings layer above the command line.
#include "gb10tune/launch/launch_fit.hpp"

#include <gtest/gtest.h>

#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::launch {
namespace {

using nlohmann::json;
using plan::FitKnob;
using testing::kGiB;
using testing::kMiB;

constexpr std::uint64_t kGB = 1'000'000'000ull;

// Settings with `command_line` given on the command line over the dense profile's knobs.
LaunchSettings fit_settings(const json& command_line) {
  return LaunchSettings::resolve(
      {{"profile gb10-dense-mtp",
        {{"slots", 3}, {"ctx_per_slot", 196608}, {"cache_ram_mib", 24576}}},
       {"command line", command_line}});
}

// The command launch builds from `settings` (only what the fit reads of it).
ServerCommand fit_command(const LaunchSettings& settings) {
  ServerCommand command;
  command.slots = static_cast<std::uint32_t>(settings.integer("slots"));
  command.ctx_per_slot = static_cast<std::uint64_t>(settings.integer("ctx_per_slot"));
  command.ctx_total = command.ctx_per_slot * command.slots;
  return command;
}

plan::PlanConfig fit_config(const LaunchSettings& settings) {
  plan::PlanConfig config;
  const ServerCommand command = fit_command(settings);
  config.slots = command.slots;
  config.ctx_total = command.ctx_total;
  config.kv_unified = command.slots > 1;
  const std::int64_t mib = settings.integer("cache_ram_mib");
  config.cache_ram_bytes = mib < 0 ? 0 : static_cast<std::uint64_t>(mib) * kMiB;
  return config;
}

// A 2 MB llama with 1 KiB of f16 KV per cell.
model::ModelFacts fit_tiny_llama() {
  auto facts = testing::describe(testing::llama_header(2, 262144, 256, 4, 2));
  EXPECT_TRUE(facts) << facts.error().message;
  facts->weight_bytes = 2'000'000;
  return *facts;
}

plan::PlanBudget fit_budget(std::uint64_t available) {
  plan::PlanBudget budget;
  budget.mem_available = available + 12 * kGB;
  budget.reserve_bytes = 12 * kGB;
  return budget;
}

bool adjustable(const plan::FitRequest& request, FitKnob knob) {
  return request.adjustable[static_cast<std::size_t>(knob)];
}

TEST(LaunchFit, AutoLowersOnlyWhatTheCommandLineLeftUnsetAndOnLowersAnything) {
  const LaunchSettings settings = fit_settings({{"slots", 2}});
  auto request = launch_fit_request(settings, fit_command(settings), fit_config(settings), true);
  EXPECT_TRUE(adjustable(request, FitKnob::ctx_per_slot));
  EXPECT_FALSE(adjustable(request, FitKnob::slots));
  EXPECT_TRUE(adjustable(request, FitKnob::cache_ram));

  const LaunchSettings on = fit_settings({{"slots", 2}, {"fit", "on"}});
  request = launch_fit_request(on, fit_command(on), fit_config(on), true);
  EXPECT_TRUE(adjustable(request, FitKnob::slots));
}

// --cache-ram -1 is sized by the plan, not asked: the fit never lowers it.
TEST(LaunchFit, AnUnboundedPromptCacheIsNeverLowered) {
  const LaunchSettings settings = fit_settings({{"cache_ram_mib", -1}, {"fit", "on"}});
  const auto request =
      launch_fit_request(settings, fit_command(settings), fit_config(settings), true);
  EXPECT_FALSE(adjustable(request, FitKnob::cache_ram));
  EXPECT_TRUE(adjustable(request, FitKnob::ctx_per_slot));
}

TEST(LaunchFit, AskedKnobsAndPriorityComeFromTheCommandAndTheSettings) {
  const LaunchSettings settings =
      fit_settings({{"fit_priority", json::array({"slots", "cache_ram_mib", "ctx_per_slot"})}});
  const auto request =
      launch_fit_request(settings, fit_command(settings), fit_config(settings), true);
  EXPECT_EQ(request.asked.ctx_per_slot, 196608u);
  EXPECT_EQ(request.asked.slots, 3u);
  EXPECT_EQ(request.asked.cache_ram_bytes, 24576 * kMiB);
  EXPECT_EQ(request.priority,
            (std::vector<FitKnob>{FitKnob::slots, FitKnob::cache_ram, FitKnob::ctx_per_slot}));
}

// Each trial configuration is the one launch would build: -c = per slot x slots, the pool as
// kv_unified and the build decide, everything else as configured.
TEST(LaunchFit, KnobsAreConfiguredAsLaunchBuildsTheCommand) {
  plan::PlanConfig base;
  base.ubatch = 1024;
  base.mtp = true;
  const plan::FitKnobs one{8192, 1, 0};
  const plan::FitKnobs three{4096, 3, 512 * kMiB};
  plan::PlanConfig c = config_for_knobs(base, three, true, "auto");
  EXPECT_EQ(c.slots, 3u);
  EXPECT_EQ(c.ctx_total, 3u * 4096);
  EXPECT_EQ(c.cache_ram_bytes, 512 * kMiB);
  EXPECT_TRUE(c.kv_unified);
  EXPECT_EQ(c.ubatch, 1024u);
  EXPECT_TRUE(c.mtp);
  EXPECT_FALSE(config_for_knobs(base, one, true, "auto").kv_unified);
  EXPECT_TRUE(config_for_knobs(base, one, true, "on").kv_unified);
  EXPECT_FALSE(config_for_knobs(base, three, true, "off").kv_unified);
  EXPECT_FALSE(config_for_knobs(base, three, false, "on").kv_unified);  // no -kvu in the build
  // The request's own configuration is this one.
  const LaunchSettings settings = fit_settings({{"kv_unified", "off"}});
  const auto request =
      launch_fit_request(settings, fit_command(settings), fit_config(settings), true);
  EXPECT_FALSE(request.configure(three).kv_unified);
  EXPECT_EQ(request.configure(three).ctx_total, 3u * 4096);
}

// The first example through launch's own fit: the context per slot and the slots came
// from the profile, the prompt cache gives way; the lowered value is the layer above the
// command line, in MiB, and says where it came from.
TEST(LaunchFit, WhatTheFitLoweredIsTheLayerAboveTheCommandLine) {
  const model::ModelFacts model = fit_tiny_llama();
  const LaunchSettings settings = fit_settings({{"slots", 3}});
  plan::PlanConfig config = fit_config(settings);
  config.overhead_bytes = 6 * kGB;
  const auto fitted =
      fit_launch(model, settings, fit_command(settings), config, fit_budget(13 * kGB), true);
  ASSERT_TRUE(fitted) << fitted.error().message;
  EXPECT_TRUE(fitted->summary.failed.empty());
  EXPECT_EQ(fitted->summary.mode, "auto");
  ASSERT_EQ(fitted->summary.given_up.size(), 1u);
  EXPECT_EQ(fitted->summary.given_up[0].knob, FitKnob::cache_ram);
  EXPECT_EQ(fitted->summary.given_up_from, std::vector<std::string>{"profile gb10-dense-mtp"});
  ASSERT_TRUE(fitted->lowered);
  EXPECT_EQ(fitted->lowered->source, "fit (memory)");
  ASSERT_TRUE(fitted->lowered->values.contains("cache_ram_mib"));
  const std::uint64_t mib = fitted->lowered->values["cache_ram_mib"].get<std::uint64_t>();
  EXPECT_EQ(mib, fitted->summary.given_up[0].chosen >> 20);
  EXPECT_GT(mib, 0u);
  EXPECT_LT(mib, 24576u);
  // The fitted settings plan within the budget.
  const LaunchSettings after =
      LaunchSettings::resolve({{"profile gb10-dense-mtp",
                                {{"slots", 3}, {"ctx_per_slot", 196608}, {"cache_ram_mib", 24576}}},
                               {"command line", {{"slots", 3}}},
                               *fitted->lowered});
  EXPECT_EQ(after.at("cache_ram_mib").source, "fit (memory)");
  plan::PlanConfig again = fit_config(after);
  again.overhead_bytes = 6 * kGB;
  const auto plan = plan::make_plan(model, again, fit_budget(13 * kGB));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->fits);
}

TEST(LaunchFit, AsAskedNothingIsLoweredAndNothingFittingIsAFailedSummary) {
  const model::ModelFacts model = fit_tiny_llama();
  const LaunchSettings settings = fit_settings({{"fit", "on"}});
  auto fitted = fit_launch(model, settings, fit_command(settings), fit_config(settings),
                           fit_budget(100 * kGB), true);
  ASSERT_TRUE(fitted) << fitted.error().message;
  EXPECT_TRUE(fitted->summary.given_up.empty());
  EXPECT_FALSE(fitted->lowered);

  fitted = fit_launch(model, settings, fit_command(settings), fit_config(settings),
                      fit_budget(1'000'000), true);
  ASSERT_TRUE(fitted) << fitted.error().message;
  EXPECT_NE(fitted->summary.failed.find("nothing fits"), std::string::npos)
      << fitted->summary.failed;
  EXPECT_FALSE(fitted->lowered);

  // No budget to fit against is an error of its own.
  const auto unknown = fit_launch(model, settings, fit_command(settings), fit_config(settings),
                                  plan::PlanBudget{}, true);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ExitCode::failed);
}

TEST(LaunchFit, RunsWhenTheBudgetIsKnownAndTheSettingAsks) {
  plan::MemoryPlan fits;
  fits.available_bytes = 10 * kGiB;
  fits.fits = true;
  plan::MemoryPlan over = fits;
  over.fits = false;
  EXPECT_FALSE(fit_runs(fits, "auto", false));
  EXPECT_TRUE(fit_runs(over, "auto", false));
  EXPECT_TRUE(fit_runs(fits, "on", false));
  EXPECT_FALSE(fit_runs(over, "off", false));
  EXPECT_FALSE(fit_runs(over, "auto", true));  // --force
  plan::MemoryPlan unknown = over;
  unknown.available_bytes.reset();
  EXPECT_FALSE(fit_runs(unknown, "on", false));
}

}  // namespace
}  // namespace gb10tune::launch
