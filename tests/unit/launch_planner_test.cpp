// The launch planner as the CLI drives it, on a fixture machine with the stand-in llama-server:
// every decision of a launch (the settings' sources, the profile, the command, the fit, the
// refusals, the notes it goes on past, the record it leaves) reached without the CLI.
#include "gb10tune/launch/launch_planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "gb10tune/launch/launch_session.hpp"
#include "support/fake_gpu.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune::launch {
namespace {

// The report's model on disk: 16.8 GB of (sparse) q4_K weights, one MTP block.
std::string planner_report_model(const testing::TempDir& dir) {
  testing::GgufWriter w = testing::report_model();
  w.tensor("blk.0.ffn_down.weight", {5120, 17408 * 12}, gguf::GgmlType::q4_k);
  const auto path = dir.path() / "m.gguf";
  w.write(path);
  return path.string();
}

// A planner on fixture machine `scenario` (12.3 GB available on no-gpu) whose notes are kept.
struct PlannerRun {
  explicit PlannerRun(const std::string& scenario, platform::Environment env = {})
      : gpu(testing::fake_gpu_for(scenario)) {
    context.env = std::move(env);
    context.sysroot = platform::Sysroot(testing::sysroot_fixture(scenario));
    context.gpu = &gpu;
    context.note = [this](NoteKind kind, const std::string& text) {
      notes.push_back((kind == NoteKind::warning ? "warning: " : "") + text);
    };
  }

  // Drafts and plans `request`; `contact_workers` as a start or dry run would.
  Expected<LaunchPlan> plan(LaunchRequest request, bool contact_workers = true) {
    auto draft = draft_launch(std::move(request), context);
    if (!draft) {
      return draft.error();
    }
    return plan_launch(std::move(*draft), context, contact_workers);
  }

  testing::FakeGpuBackend gpu;
  PlannerContext context;
  std::vector<std::string> notes;
};

// The request of `launch --model MODEL --slots 3 --no-kvu --reserve 2GB --cache-ram 0` on the
// stand-in, plus `more` settings.
LaunchRequest planner_request(const std::string& model, const nlohmann::json& more = {}) {
  LaunchRequest request;
  request.values = {{"model", model},   {"llama_server", testing::stand_in_server_path().string()},
                    {"slots", 3},       {"kv_unified", "off"},
                    {"reserve", "2GB"}, {"cache_ram_mib", 0}};
  if (more.is_object()) {
    request.values.update(more);
  }
  return request;
}

bool argv_has(const std::vector<std::string>& argv, const std::string& option,
              const std::string& value) {
  const auto it = std::find(argv.begin(), argv.end(), option);
  return it != argv.end() && it + 1 != argv.end() && *(it + 1) == value;
}

// The context per slot came from the profile: the fit lowers it, rebuilds the command with it,
// and the fitted settings say where each value came from.
TEST(LaunchPlanner, TheFitLowersWhatTheCommandLineLeftAndRebuildsTheCommand) {
  testing::TempDir dir;
  PlannerRun run("no-gpu");
  const auto plan = run.plan(planner_request(planner_report_model(dir)));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->draft.layers.profile, "gb10-dense-mtp");
  EXPECT_EQ(plan->draft.layers.profile_reason, "chosen: the default for dense models");
  ASSERT_TRUE(plan->fit);
  ASSERT_EQ(plan->fit->given_up.size(), 1u);
  EXPECT_EQ(plan->fit->given_up[0].knob, plan::FitKnob::ctx_per_slot);
  EXPECT_EQ(plan->fit->given_up_from, std::vector<std::string>{"profile gb10-dense-mtp"});
  const std::uint64_t chosen = plan->fit->given_up[0].chosen;
  EXPECT_LT(chosen, 196608u);
  EXPECT_EQ(plan->draft.settings.at("ctx_per_slot").source, "fit (memory)");
  EXPECT_EQ(plan->draft.settings.at("slots").source, "command line");
  EXPECT_EQ(plan->draft.built.command.ctx_per_slot, chosen);
  EXPECT_TRUE(argv_has(plan->draft.built.command.argv, "-c", std::to_string(chosen * 3)));
  EXPECT_EQ(plan->config.ctx_total, chosen * 3);
  EXPECT_TRUE(plan->plan.fits);
  EXPECT_FALSE(start_refusal(*plan));
  EXPECT_TRUE(check_export(*plan));
  EXPECT_TRUE(run.notes.empty()) << run.notes.front();
  // The preview shows this plan, not a copy of it.
  const render::LaunchPreview preview = preview_of(*plan);
  EXPECT_EQ(preview.plan, &plan->plan);
  EXPECT_EQ(preview.command, &plan->draft.built.command);
  EXPECT_EQ(preview.fit, &*plan->fit);
  EXPECT_EQ(preview.model_files, std::vector<std::string>{plan->draft.candidate.path.string()});
}

// With the fit off the plan is refused for a start and for an export, each saying what fits.
TEST(LaunchPlanner, APlanThatDoesNotFitIsRefusedUnlessForced) {
  testing::TempDir dir;
  const std::string model = planner_report_model(dir);
  PlannerRun run("no-gpu");
  const auto plan = run.plan(planner_request(model, {{"fit", "off"}}));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->fit);
  EXPECT_FALSE(plan->plan.fits);
  const auto refusal = start_refusal(*plan);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("nothing was started. What fits: 3 slot(s) of "), std::string::npos)
      << *refusal;
  const Status exported = check_export(*plan);
  ASSERT_FALSE(exported);
  EXPECT_EQ(exported.error().code, ExitCode::memory_refused);
  EXPECT_NE(exported.error().message.find("nothing was printed"), std::string::npos);

  LaunchRequest forced = planner_request(model, {{"fit", "off"}});
  forced.force = true;
  const auto anyway = run.plan(std::move(forced));
  ASSERT_TRUE(anyway) << anyway.error().message;
  EXPECT_FALSE(start_refusal(*anyway));
  EXPECT_TRUE(check_export(*anyway));
}

// -c spreads over the slots; LLAMA_ARG_RPC becomes the workers (said in a note, before a build
// without the RPC backend is refused) and an --rpc list in the arguments.
TEST(LaunchPlanner, TheDraftPutsTheRequestInOneForm) {
  testing::TempDir dir;
  platform::Environment env;
  env.set("LLAMA_ARG_RPC", "127.0.0.1:50052");
  PlannerRun run("no-gpu", env);
  LaunchRequest request = planner_request(planner_report_model(dir));
  request.ctx_size = 3 * 8192;
  request.extra = {"--threads", "4"};
  const auto without_rpc = draft_launch(request, run.context);
  ASSERT_FALSE(without_rpc);
  EXPECT_EQ(without_rpc.error().code, ExitCode::usage);
  EXPECT_NE(without_rpc.error().message.find("has no --rpc option"), std::string::npos);
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run.notes[0],
            "LLAMA_ARG_RPC=127.0.0.1:50052 in the environment: planned as --rpc 127.0.0.1:50052");

  const testing::ScopedEnv rpc_build(
      "STANDIN_HELP",
      testing::fixture("llama-server/help-2026-08-commit-3f545be-rpc.txt").string());
  const auto draft = draft_launch(std::move(request), run.context);
  ASSERT_TRUE(draft) << draft.error().message;
  EXPECT_EQ(draft->settings.integer("ctx_per_slot"), 8192);
  EXPECT_EQ(draft->settings.at("ctx_per_slot").source, "command line");
  ASSERT_EQ(draft->endpoints.size(), 1u);
  EXPECT_EQ(draft->endpoints[0].to_string(), "127.0.0.1:50052");
  EXPECT_EQ(draft->settings.text_list("extra_args"),
            (std::vector<std::string>{"--threads", "4", "--rpc", "127.0.0.1:50052"}));

  LaunchRequest both = planner_request(draft->candidate.path.string(), {{"ctx_per_slot", 4096}});
  both.ctx_size = 4096;
  const auto refused = draft_launch(std::move(both), run.context);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ExitCode::usage);
  EXPECT_NE(refused.error().message.find("not both"), std::string::npos);
}

// The reserves are read from the settings, whichever layer set them.
TEST(LaunchPlanner, TheReservesComeFromTheSettings) {
  testing::TempDir dir;
  PlannerRun run("no-gpu");
  const std::string model = planner_report_model(dir);
  const auto plan = run.plan(planner_request(model, {{"gpu_reserve", "3GiB"}}));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->sizes.gpu_reserve, 3ull << 30);
  EXPECT_EQ(plan->sizes.rpc_reserve, 1ull << 30);
  EXPECT_EQ(plan->sizes.reserve, 2'000'000'000u);
  const auto bad = run.plan(planner_request(model, {{"rpc_reserve", "lots"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::usage);
  EXPECT_NE(bad.error().message.find("--rpc-reserve 'lots' is not a size"), std::string::npos)
      << bad.error().message;
}

// What launch writes for the started server reads back, through the one reader, as planned.
TEST(LaunchPlanner, TheRecordOfAPlanReadsBackAsPlanned) {
  testing::TempDir dir;
  PlannerRun run("no-gpu");
  const auto plan = run.plan(planner_request(planner_report_model(dir)));
  ASSERT_TRUE(plan) << plan.error().message;
  const StatePaths paths = StatePaths::under(dir.path() / "state");
  const LaunchRecord record =
      make_launch_record(preview_of(*plan), paths, "http://127.0.0.1:8080", "2026-11-29T12:00:00Z");
  LaunchRecord written = record;
  written.pid = 42;
  const auto back =
      record_from_json(nlohmann::json::parse(record_to_json(written).dump()), "launch.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->planned.reserve_bytes, 2'000'000'000u);
  EXPECT_EQ(back->planned.reserve_bytes, record.planned.reserve_bytes);
  EXPECT_EQ(back->planned.context_length, plan->draft.model.context_length);
  EXPECT_EQ(back->planned.devices.kind, DevicePlanKind::one_pool);  // no discrete GPU here
  EXPECT_FALSE(back->planned.rpc);
  EXPECT_EQ(back->slots, 3u);
  EXPECT_EQ(back->ctx_per_slot, plan->draft.built.command.ctx_per_slot);
  EXPECT_EQ(back->expected_total_bytes, plan->plan.total_bytes);
  EXPECT_EQ(back->log_path, paths.log.string());
  EXPECT_EQ(back->launched_at, "2026-11-29T12:00:00Z");
}

}  // namespace
}  // namespace gb10tune::launch
