#include "gb10tune/verify/verify.hpp"

#include <gtest/gtest.h>

#include "gb10tune/render/verify_render.hpp"
#include "support/fake_gpu.hpp"
#include "support/test_context.hpp"

namespace gb10tune::verify {
namespace {

using testing::sysroot_fixture;

// A server that answers from data.
class FakeProbe final : public ServerProbe {
 public:
  HealthAnswer health_answer{HealthState::ready, 200, ""};
  Expected<PropsAnswer> props_answer = PropsAnswer{589824, 3, "/models/m.gguf", "b6500", "none"};
  Expected<std::vector<SlotAnswer>> slots_answer = std::vector<SlotAnswer>{
      {0, 589824, true, false}, {1, 589824, true, false}, {2, 589824, true, true}};
  Expected<SmokeTimings> smoke_answer = SmokeTimings{12, 310.5, 32, 23.7, 40.0, 27.0};

  HealthAnswer health() override { return health_answer; }
  Expected<PropsAnswer> props() override { return props_answer; }
  Expected<std::vector<SlotAnswer>> slots() override { return slots_answer; }
  Expected<SmokeTimings> smoke() override { return smoke_answer; }
};

// The findings of `result`'s first server, as "group/id/severity" strings.
std::vector<std::string> verdicts(const VerifyResult& result) {
  std::vector<std::string> out;
  if (result.servers.empty()) {
    return out;
  }
  for (const CheckGroup& group : result.servers[0].groups) {
    for (const Finding& finding : group.findings) {
      out.push_back(group.name + "/" + finding.id + "/" +
                    std::string(server::severity_name(finding.severity)));
    }
  }
  return out;
}

const Finding* find(const VerifyResult& result, std::string_view id) {
  for (const ServerReport& server : result.servers) {
    for (const CheckGroup& group : server.groups) {
      for (const Finding& finding : group.findings) {
        if (finding.id == id) {
          return &finding;
        }
      }
    }
  }
  for (const Finding& note : result.notes) {
    if (note.id == id) {
      return &note;
    }
  }
  return nullptr;
}

struct Machine {
  explicit Machine(const std::string& scenario)
      : root(sysroot_fixture(scenario)), gpu(testing::fake_gpu_for(scenario)) {
    services.root = &root;
    services.nvml = [this] {
      ++nvml_calls;
      return gpu.query_nvml();
    };
  }
  VerifyResult run(const VerifyOptions& options = {}) { return run_verify(options, services); }

  platform::Sysroot root;
  testing::FakeGpuBackend gpu;
  VerifyServices services;
  int nvml_calls = 0;
};

launch::LaunchRecord record_for(int pid, std::uint64_t start) {
  launch::LaunchRecord record;
  record.pid = pid;
  record.start_time_ticks = start;
  record.server_path = "/opt/llama.cpp/build/bin/llama-server";
  record.url = "http://127.0.0.1:8080";
  record.launched_at = "2026-11-29T11:00:00Z";
  record.slots = 3;
  record.ctx_per_slot = 196608;
  record.kv_unified = true;
  record.mtp = true;
  record.draft_n_max = 4;
  record.expected_weights_bytes = 16'800'000'000ull;
  record.expected_kv_bytes = 40'000'000'000ull;
  return record;
}

TEST(Verify, ManagedMachineFailsOnTheVariableAndTheMemory) {
  Machine machine("verify-managed");
  const VerifyResult result = machine.run();
  ASSERT_EQ(result.servers.size(), 1u);
  EXPECT_EQ(result.servers[0].found_by, "scan");
  EXPECT_EQ(result.worst(), Severity::fail);
  const Finding* env = find(result, "unified-memory-env");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->severity, Severity::fail);
  EXPECT_NE(env->evidence.find("GGML_CUDA_ENABLE_UNIFIED_MEMORY=0"), std::string::npos);
  const Finding* memory = find(result, "device-memory-path");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->severity, Severity::fail);
  EXPECT_NE(memory->evidence.find("managed path"), std::string::npos) << memory->evidence;
  EXPECT_EQ(machine.nvml_calls, 1);
}

TEST(Verify, CleanMachinePassesEveryProcessCheck) {
  Machine machine("verify-clean");
  machine.services.read_log = [&](const std::string& path) -> Expected<std::string> {
    return testing::read_text(machine.root.resolve(path));
  };
  const VerifyResult result = machine.run();
  EXPECT_EQ(verdicts(result),
            (std::vector<std::string>{
                "process/process-identity/ok", "environment/unified-memory-env/ok",
                "environment/ggml-cuda-env/ok", "memory/device-memory-path/ok", "flags/flags/warn",
                "log/cpu-features-in-build/ok", "log/prompt-cache-skips/ok"}));
}

TEST(Verify, NativeBuildLogFailsAndCacheSkipsWarn) {
  Machine machine("verify-managed");
  machine.services.read_log = [&](const std::string& path) -> Expected<std::string> {
    return testing::read_text(machine.root.resolve(path));
  };
  const VerifyResult result = machine.run();
  // The fixture's log is from a GGML_NATIVE build: DOTPROD only, no MATMUL_INT8 or SVE.
  const Finding* build = find(result, "cpu-features-in-build");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->severity, Severity::fail);
  EXPECT_NE(build->evidence.find("MATMUL_INT8, SVE"), std::string::npos) << build->evidence;
  EXPECT_EQ(find(result, "prompt-cache-skips")->severity, Severity::warn);
}

TEST(Verify, UnreadableEnvironIsAFailThatSaysSudo) {
  Machine machine("verify-unreadable");
  const VerifyResult result = machine.run();
  ASSERT_EQ(result.servers.size(), 1u);
  const Finding* env = find(result, "unified-memory-env");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->severity, Severity::fail);
  EXPECT_NE(env->fix.find("sudo"), std::string::npos);
  EXPECT_EQ(find(result, "process-identity")->severity, Severity::warn);
  EXPECT_EQ(result.worst(), Severity::fail);
}

TEST(Verify, ScriptNamedLlamaServerIsNotAServer) {
  Machine machine("verify-script");
  const VerifyResult result = machine.run();
  EXPECT_TRUE(result.servers.empty());
  EXPECT_EQ(result.no_server, "no llama-server is running");
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0].id, "not-a-server");
  EXPECT_NE(result.notes[0].evidence.find("script run by bash"), std::string::npos);
  EXPECT_EQ(result.worst(), Severity::fail);
  EXPECT_EQ(machine.nvml_calls, 0);
}

TEST(Verify, ScriptAskedForByPidFails) {
  Machine machine("verify-script");
  VerifyOptions options;
  options.pid = 5000;
  const VerifyResult result = machine.run(options);
  EXPECT_EQ(verdicts(result), (std::vector<std::string>{"process/process-identity/fail"}));
}

TEST(Verify, ZombieIsNeverAPass) {
  Machine machine("verify-zombie");
  const VerifyResult result = machine.run();
  EXPECT_TRUE(result.servers.empty());
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0].id, "exited-server");
  EXPECT_EQ(result.worst(), Severity::fail);

  VerifyOptions options;
  options.pid = 6000;
  EXPECT_EQ(verdicts(machine.run(options)),
            (std::vector<std::string>{"process/process-identity/fail"}));
}

TEST(Verify, ReusedPidOfTheLaunchRecordIsNotTheServer) {
  Machine machine("verify-pid-reuse");
  machine.services.record = record_for(4242, 123456);
  machine.services.record_path = "launch.json";
  const VerifyResult result = machine.run();
  EXPECT_TRUE(result.servers.empty());
  EXPECT_EQ(result.no_server, "no llama-server is running");
  const Finding* stale = find(result, "stale-launch-record");
  ASSERT_NE(stale, nullptr);
  EXPECT_NE(stale->evidence.find("reused"), std::string::npos) << stale->evidence;
  EXPECT_NE(stale->evidence.find("/usr/bin/vim.basic"), std::string::npos);
  EXPECT_EQ(result.worst(), Severity::fail);
}

TEST(Verify, PidFileNamingAnotherProgramFallsBackToTheScan) {
  Machine machine("verify-pid-reuse");
  machine.services.pid_file_pid = 4242;
  const VerifyResult result = machine.run();
  EXPECT_TRUE(result.servers.empty());
  EXPECT_NE(find(result, "stale-pid-file"), nullptr);
  EXPECT_EQ(result.worst(), Severity::fail);
}

TEST(Verify, MatchingLaunchRecordIsUsedAndItsUrlProbed) {
  Machine machine("verify-clean");
  machine.services.record = record_for(4242, 123456);
  std::string probed;
  machine.services.connect = [&](const std::string& url) {
    probed = url;
    return std::make_unique<FakeProbe>();
  };
  VerifyOptions options;
  options.smoke = true;
  const VerifyResult result = machine.run(options);
  ASSERT_EQ(result.servers.size(), 1u);
  EXPECT_EQ(result.servers[0].found_by, "launch record");
  EXPECT_EQ(probed, "http://127.0.0.1:8080");
  EXPECT_EQ(find(result, "server-health")->severity, Severity::ok);
  EXPECT_EQ(find(result, "server-props")->severity, Severity::ok)
      << find(result, "server-props")->evidence;
  EXPECT_EQ(find(result, "server-slots")->severity, Severity::ok);
  const Finding* spec = find(result, "speculative-decoding");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->severity, Severity::ok) << spec->evidence;
  EXPECT_NE(spec->evidence.find("smoke completion: draft_n 40, 27 accepted"), std::string::npos)
      << spec->evidence;
  const Finding* smoke = find(result, "smoke-completion");
  ASSERT_NE(smoke, nullptr);
  EXPECT_NE(smoke->evidence.find("decode 23.7 t/s"), std::string::npos) << smoke->evidence;
  EXPECT_NE(smoke->evidence.find("draft acceptance 68%"), std::string::npos) << smoke->evidence;
}

TEST(Verify, ServerChecksFailOnNoAnswerAndOnSlotDrift) {
  FakeProbe probe;
  Expectations expected;
  expected.source = "launch record";
  expected.slots = 3;
  expected.speculative = true;
  probe.health_answer = {HealthState::no_answer, 0, "connection refused"};
  auto findings = check_server(probe, expected, "http://127.0.0.1:8080");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::fail);

  probe.health_answer = {HealthState::loading, 503, ""};
  EXPECT_EQ(check_server(probe, expected, "u")[0].severity, Severity::warn);

  probe.health_answer = {HealthState::ready, 200, ""};
  probe.props_answer = PropsAnswer{589824, 4, "", "", "none"};
  findings = check_server(probe, expected, "u");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[1].severity, Severity::fail);
  EXPECT_NE(findings[1].evidence.find("4 slots"), std::string::npos);
  // /props' speculative.types is a request default in 3f545be: never judged here.
  EXPECT_EQ(findings[1].evidence.find("speculative"), std::string::npos) << findings[1].evidence;
}

TEST(Verify, PropsNamingAnotherModelFails) {
  FakeProbe probe;
  Expectations expected;
  expected.source = "flags";
  expected.model_path = "/models/other.gguf";
  const auto findings = check_server(probe, expected, "u");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[1].severity, Severity::fail);
  EXPECT_NE(findings[1].evidence.find("model /models/m.gguf, the flags say"), std::string::npos)
      << findings[1].evidence;
}

TEST(Verify, ServerContextPerSlotIsComputedLikeTheServer) {
  // -c 24576 -np 3: 8192 per stream; with -kvu every slot may use the whole pool.
  EXPECT_EQ(server_ctx_per_slot(24576, 3, false, 32768), 8192u);
  EXPECT_EQ(server_ctx_per_slot(24576, 3, true, 32768), 24576u);
  // Rounded up to 256 cells, then per stream (the tiny-qwen35 rows of docs/memory-plan.md).
  EXPECT_EQ(server_ctx_per_slot(1000, 3, false, 0), 512u);
  EXPECT_EQ(server_ctx_per_slot(1000, 3, true, 0), 1024u);
  // Capped at the training context; -c 0 is the training context per stream.
  EXPECT_EQ(server_ctx_per_slot(589824, 3, true, 262144), 262144u);
  EXPECT_EQ(server_ctx_per_slot(0, 2, false, 4096), 4096u);
  EXPECT_EQ(server_ctx_per_slot(0, 4, true, 4096), 4096u);
}

// The 2026-08 build's answers for `slots` slots of which `drafting` have a draft context.
ServerAnswers answers_of(std::size_t slots, std::size_t drafting) {
  ServerAnswers answers;
  answers.props = PropsAnswer{24576, static_cast<std::uint32_t>(slots), "/m.gguf", "b1", "none"};
  answers.slots = std::vector<SlotAnswer>{};
  for (std::size_t i = 0; i < slots; ++i) {
    answers.slots->push_back({static_cast<int>(i), 24576, i < drafting, false});
  }
  return answers;
}

Expectations mtp_plan(const std::string& source) {
  Expectations e;
  e.source = source;
  e.speculative = true;
  e.spec_type = "draft-mtp";
  e.draft_n_max = 4;
  e.model_has_mtp = true;
  e.spec_origin = "command line argv[9] --spec-type";
  return e;
}

TEST(VerifySpeculative, SlotsDraftingPassWhatever3f545besPropsSays) {
  const Expectations plan = mtp_plan("launch record");
  const Finding f = check_speculative(plan, &plan, answers_of(3, 3));
  EXPECT_EQ(f.fact, "K4");
  EXPECT_EQ(f.severity, Severity::ok) << f.evidence;
  EXPECT_NE(f.evidence.find("on: /slots: 3 of 3 slots speculative"), std::string::npos)
      << f.evidence;
  EXPECT_NE(f.evidence.find("flags: --spec-type draft-mtp, --spec-draft-n-max 4"),
            std::string::npos)
      << f.evidence;
  EXPECT_NE(f.evidence.find("launch record: draft-mtp, n-max 4"), std::string::npos);
  EXPECT_NE(f.evidence.find("speculative.types \"none\" (the per-request default"),
            std::string::npos)
      << f.evidence;
}

TEST(VerifySpeculative, SlotsWithoutDraftFailWhenPlanned) {
  const Expectations plan = mtp_plan("launch record");
  Expectations flags;  // started without --spec-type
  flags.source = "flags";
  const Finding f = check_speculative(plan, &flags, answers_of(3, 0));
  EXPECT_EQ(f.severity, Severity::fail);
  EXPECT_NE(f.evidence.find("off according to /slots, but the launch record asks for draft-mtp"),
            std::string::npos)
      << f.evidence;
  EXPECT_NE(f.evidence.find("flags: --spec-type not set"), std::string::npos) << f.evidence;
  EXPECT_NE(f.fix.find("--spec-type draft-mtp is missing"), std::string::npos) << f.fix;
}

TEST(VerifySpeculative, FlagsAskingButSlotsNotDraftingSaysWhichSaysWhat) {
  const Expectations plan = mtp_plan("flags");
  const Finding f = check_speculative(plan, &plan, answers_of(2, 0));
  EXPECT_EQ(f.severity, Severity::fail);
  EXPECT_NE(f.evidence.find("/slots: 0 of 2 slots speculative"), std::string::npos);
  EXPECT_NE(f.evidence.find("flags: --spec-type draft-mtp"), std::string::npos);
  EXPECT_NE(f.fix.find("speculative decoding not supported"), std::string::npos) << f.fix;
}

TEST(VerifySpeculative, ModelWithAHeadStartedWithoutTheFlagFails) {
  Expectations flags;
  flags.source = "flags";
  flags.model_has_mtp = true;
  const Finding f = check_speculative(flags, &flags, answers_of(1, 0));
  EXPECT_EQ(f.severity, Severity::fail);
  EXPECT_NE(f.evidence.find("the model's MTP head asks for draft-mtp"), std::string::npos)
      << f.evidence;
  EXPECT_NE(f.fix.find("--spec-type draft-mtp is missing"), std::string::npos) << f.fix;
  // A model without a head and no flag: nothing to draft with, ok.
  flags.model_has_mtp = false;
  EXPECT_EQ(check_speculative(flags, &flags, answers_of(1, 0)).severity, Severity::ok);
}

TEST(VerifySpeculative, WithoutSlotsTheSmokeCompletionDecides) {
  const Expectations plan = mtp_plan("launch record");
  ServerAnswers answers = answers_of(3, 0);
  for (SlotAnswer& slot : *answers.slots) {
    slot.speculative.reset();  // a build whose /slots does not say
  }
  EXPECT_EQ(check_speculative(plan, nullptr, answers).severity, Severity::warn);
  answers.smoke = SmokeTimings{12, 300, 16, 20, 14.0, 3.0};
  const Finding drafted = check_speculative(plan, nullptr, answers);
  EXPECT_EQ(drafted.severity, Severity::ok) << drafted.evidence;
  EXPECT_NE(drafted.evidence.find("smoke completion: draft_n 14, 3 accepted"), std::string::npos)
      << drafted.evidence;
  answers.smoke = SmokeTimings{12, 300, 16, 20, std::nullopt, std::nullopt};
  EXPECT_EQ(check_speculative(plan, nullptr, answers).severity, Severity::fail);
}

TEST(VerifySpeculative, DraftingThoughTheRecordSaysOffWarns) {
  Expectations plan;
  plan.source = "launch record";
  plan.speculative = false;
  plan.spec_type = "none";
  EXPECT_EQ(check_speculative(plan, nullptr, answers_of(3, 3)).severity, Severity::warn);
  EXPECT_EQ(check_speculative(plan, nullptr, answers_of(3, 0)).severity, Severity::ok);
}

TEST(Verify, SmokeFailureFails) {
  FakeProbe probe;
  probe.smoke_answer = Error{"POST /v1/chat/completions: 500"};
  EXPECT_EQ(check_smoke(probe)[0].severity, Severity::fail);
}

TEST(Verify, MemoryWithoutNvmlWarnsOnLargeAnonymousRss) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory =
      sys::ProcessMemory{90ull << 30, 89ull << 30, 1ull << 30, 0, "status", std::nullopt};
  gpu::NvmlReport nvml;
  nvml.detail = "NVML not loaded";
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::warn);
  nvml.loaded = true;  // loaded, pid not listed: nothing on the GPU
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::fail);
  nvml.processes.push_back({0, 7, 58ull << 30});
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::ok);
}

// Process 7 holding `rss`, `anon` of it anonymous and the rest file-backed.
ProcessSnapshot cpu_process_of(std::uint64_t rss, std::uint64_t anon) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory = sys::ProcessMemory{rss, anon, rss - anon, 0, "status", std::nullopt};
  return snapshot;
}

// A CPU launch plan of `load` bytes at load, `weights` of them weights.
Expectations cpu_plan_of(std::uint64_t weights, std::uint64_t load) {
  Expectations expected;
  expected.weights_bytes = weights;
  expected.load_bytes = load;
  expected.backend = "cpu";
  return expected;
}

TEST(Verify, PlanVsMeasuredShowsTheErrorAndWarnsAboveThePlan) {
  const ProcessSnapshot snapshot = cpu_process_of(1000ull << 20, 400ull << 20);
  gpu::NvmlReport nvml;
  // No planned figure (a server launch did not start): no finding.
  ASSERT_EQ(check_memory(snapshot, nvml, {}).size(), 1u);
  Expectations expected = cpu_plan_of(580ull << 20, 980ull << 20);
  auto findings = check_memory(snapshot, nvml, expected);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].id, "plan-vs-measured");
  EXPECT_EQ(findings[1].severity, Severity::ok);
  EXPECT_NE(findings[1].evidence.find("error +2.0%"), std::string::npos) << findings[1].evidence;
  expected.load_bytes = 900ull << 20;  // the process holds 11% more than planned
  findings = check_memory(snapshot, nvml, expected);
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].evidence.find("error +11.1%"), std::string::npos) << findings[1].evidence;
  expected.cache_ram_bytes = 200ull << 20;  // unless the prompt cache's limit covers it
  EXPECT_EQ(check_memory(snapshot, nvml, expected)[1].severity, Severity::ok);
  // A CUDA server without NVML: unknown, never ok.
  expected.backend = "cuda";
  findings = check_memory(snapshot, nvml, expected);
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].evidence.find("measured unknown"), std::string::npos);
}

// Issue 22: verify called an idle CPU server at -65% of its plan a match. It is ok only
// within 5% on both sides of what the process can have touched: an idle CPU server has not
// touched its compute buffers, and a plan far above the process is a (safe) wrong plan.
TEST(Verify, PlanVsMeasuredIsOkOnlyWithinTheToleranceOnBothSides) {
  ProcessSnapshot snapshot = cpu_process_of(560ull << 20, 556ull << 20);
  gpu::NvmlReport nvml;
  Expectations expected = cpu_plan_of(2ull << 20, 1638ull << 20);
  auto findings = check_memory(snapshot, nvml, expected);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].severity, Severity::warn) << findings[1].evidence;
  EXPECT_EQ(findings[1].summary, "the memory plan is far above the process");
  EXPECT_NE(findings[1].evidence.find("error -65.8%"), std::string::npos) << findings[1].evidence;
  EXPECT_NE(findings[1].evidence.find("a safe plan, but a wrong one"), std::string::npos);
  EXPECT_NE(findings[1].evidence.find("older gb10tune"), std::string::npos);
  EXPECT_FALSE(findings[1].fix.empty());

  // The record says which part is touched only as batches use it: like with like.
  expected.on_demand_bytes = 1100ull << 20;
  findings = check_memory(snapshot, nvml, expected);
  EXPECT_EQ(findings[1].severity, Severity::ok) << findings[1].evidence;
  EXPECT_NE(findings[1].evidence.find("plan at load 538.0 MiB, 1.6 GiB with the 1.1 GiB of "
                                      "buffers"),
            std::string::npos)
      << findings[1].evidence;
  EXPECT_NE(findings[1].evidence.find("error +4.1%"), std::string::npos) << findings[1].evidence;

  // After traffic: more than at load, within the plan's buffers.
  snapshot.memory->vm_rss = 1200ull << 20;
  EXPECT_EQ(check_memory(snapshot, nvml, expected)[1].severity, Severity::ok);
  // A peak (VmHWM) beyond the whole plan is a warning even when RSS fell back since.
  snapshot.memory->vm_rss = 560ull << 20;
  snapshot.memory->vm_hwm = 1800ull << 20;
  findings = check_memory(snapshot, nvml, expected);
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].evidence.find("peak 1.8 GiB"), std::string::npos) << findings[1].evidence;
  EXPECT_NE(findings[1].evidence.find("holds more than the plan allowed"), std::string::npos);
}

// The same figure launch's check judges (LaunchAndVerifySayOneVerdictOnTheSameFigure): an idle
// CPU server 9% above the plan at load, within what batches may add, is the same verdict here.
TEST(Verify, PlanVsMeasuredSaysLaunchsVerdict) {
  const ProcessSnapshot snapshot = cpu_process_of(1090ull << 20, 1086ull << 20);
  Expectations expected = cpu_plan_of(2ull << 20, 3000ull << 20);
  expected.on_demand_bytes = 2000ull << 20;  // at load 1000 MiB
  const auto findings = check_memory(snapshot, gpu::NvmlReport{}, expected);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].severity, Severity::ok) << findings[1].evidence;
  EXPECT_EQ(findings[1].summary, "the memory plan matches the process");
  EXPECT_NE(findings[1].evidence.find("error +9.0%: more than at load"), std::string::npos)
      << findings[1].evidence;
}

// A plan that was only an estimate (launch --force --overhead, unsupported architecture): the
// measurement is shown, never judged ok, even when it is within the figure.
TEST(Verify, PlanVsMeasuredNeverPassesAnEstimate) {
  Expectations expected = cpu_plan_of(580ull << 20, 980ull << 20);
  expected.plan_estimate = true;
  const auto findings =
      check_memory(cpu_process_of(1000ull << 20, 400ull << 20), gpu::NvmlReport{}, expected);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].id, "plan-vs-measured");
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].summary.find("estimate"), std::string::npos) << findings[1].summary;
  EXPECT_NE(findings[1].evidence.find("measured"), std::string::npos) << findings[1].evidence;
}

TEST(Verify, EmptyValueOfTheVariableStillFails) {
  ProcessSnapshot snapshot;
  snapshot.env = platform::Environment();
  snapshot.env->set("GGML_CUDA_ENABLE_UNIFIED_MEMORY", "");
  EXPECT_EQ(check_environment(snapshot)[0].severity, Severity::fail);
}

TEST(Verify, LogCountsCacheSkipsOfThisRunOnly) {
  sys::CpuInfo cpu;
  cpu.family = sys::CpuFamily::arm;
  cpu.features = {"dotprod", "i8mm", "sve"};
  const std::string line =
      "system_info: n_threads = 20 | CPU : NEON = 1 | DOTPROD = 1 | MATMUL_INT8 = 1 | SVE = 1 "
      "| SVE_CNT = 16 |\n";
  const std::string skip = "prompt state size 40 GB exceeds cache size limit 16 GB, skipping\n";
  const auto findings = check_log(line + skip + skip + line + skip, "log", &cpu);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, Severity::ok) << findings[0].evidence;
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].evidence.find("1 time in log"), std::string::npos) << findings[1].evidence;
}

TEST(Verify, SystemInfoFeaturesAreThoseSetToOne) {
  EXPECT_EQ(parse_system_info_features("system_info: n_threads = 20 (n_threads_batch = 20) / 20 "
                                       "| CUDA : ARCHS = 1210 | CPU : NEON = 1 | SVE = 0 | "
                                       "DOTPROD = 1 |"),
            (std::vector<std::string>{"NEON", "DOTPROD"}));
}

TEST(Verify, ProtectedProcessThatIsNotAServerIsNotProbed) {
  // pid 1 as root in a container: exe and environ denied even to root, cmdline readable.
  testing::TempDir dir;
  std::string stat = "1 (process_api) S 0 1 1 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 5";
  for (int i = 0; i < 30; ++i) {
    stat += " 0";
  }
  dir.write("proc/1/stat", stat + "\n");
  dir.write("proc/1/cmdline", std::string("/process_api\0--firecracker-init\0", 32));
  dir.write("proc/1/exe.errno", "EACCES\n");
  dir.write("proc/1/environ.errno", "EACCES\n");
  dir.write("proc/1/status", "Name:\tprocess_api\nVmRSS:\t11524 kB\nRssAnon:\t5356 kB\n");
  const platform::Sysroot root(dir.path());
  VerifyServices services;
  services.root = &root;
  int probes = 0;
  services.connect = [&](const std::string&) {
    ++probes;
    return std::make_unique<FakeProbe>();
  };
  VerifyOptions options;
  options.pid = 1;
  const VerifyResult result = run_verify(options, services);
  EXPECT_EQ(verdicts(result), (std::vector<std::string>{"process/process-identity/fail"}));
  const Finding* identity = find(result, "process-identity");
  ASSERT_NE(identity, nullptr);
  EXPECT_NE(identity->evidence.find("pid 1 is not a llama-server: it runs /process_api"),
            std::string::npos)
      << identity->evidence;
  EXPECT_EQ(probes, 0);
}

TEST(Verify, MemoryWithoutNvmlIsUnknownEvenWhenSmall) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 1;
  snapshot.memory =
      sys::ProcessMemory{11ull << 20, 5ull << 20, 8ull << 10, 6ull << 20, "status", std::nullopt};
  gpu::NvmlReport nvml;
  nvml.detail = "NVML not loaded";
  const Finding finding = check_memory(snapshot, nvml, {})[0];
  EXPECT_EQ(finding.severity, Severity::warn);
  EXPECT_NE(finding.evidence.find("unknown"), std::string::npos) << finding.evidence;
}

TEST(Verify, ProcessNvmlDoesNotListHoldsNoGpuMemory) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory =
      sys::ProcessMemory{2ull << 30, 1ull << 30, 1ull << 30, 0, "status", std::nullopt};
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::fail);
  nvml.processes.push_back({0, 7, 300ull << 20});  // listed, but too little to tell
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::warn);
  Expectations expected;
  expected.weights_bytes = 16'800'000'000ull;  // and now less than half the weights
  expected.kv_bytes = 1ull << 30;
  EXPECT_EQ(check_memory(snapshot, nvml, expected)[0].severity, Severity::fail);
  nvml.processes[0].used_bytes = 18ull << 30;
  EXPECT_EQ(check_memory(snapshot, nvml, expected)[0].severity, Severity::ok);
}

// The log of the CPU-only llama-server of llama.cpp 2026-08 (commit 3f545be, built with the RPC
// backend) run with -ngl 99 at -lv 4, stderr included: captured, see
// tests/fixtures/llama-server/README.md.
std::string cpu_server_log() {
  return testing::read_text(testing::fixture("llama-server/log-cpu-ngl99-lv4-3f545be.txt"));
}

TEST(VerifyGpuEvidence, CpuBuildLogIsEvidenceAgainstTheGpu) {
  const GpuLogEvidence evidence = read_gpu_evidence(cpu_server_log(), "server.log");
  // With the RPC backend built in, llama.cpp claims offload support and says every layer was
  // offloaded; the buffer lines tell the truth: the weights are in host memory.
  ASSERT_TRUE(evidence.offloaded && evidence.offloadable);
  EXPECT_EQ(*evidence.offloaded, 4u);
  EXPECT_EQ(*evidence.offloadable, 4u);
  EXPECT_TRUE(evidence.device_buffers.empty());
  EXPECT_EQ(evidence.host_buffers, (std::vector<std::string>{"CPU_Mapped 0.55 MiB"}));
  EXPECT_TRUE(evidence.no_gpu_line.empty());
  EXPECT_TRUE(evidence.against_gpu());
  EXPECT_TRUE(evidence.no_gpu_backend());
  EXPECT_FALSE(evidence.all_layers_on_gpu());
  EXPECT_NE(evidence.describe().find("no model buffer on a GPU"), std::string::npos)
      << evidence.describe();
  // At the default verbosity the same server logs nothing about the GPU: no evidence.
  const GpuLogEvidence quiet = read_gpu_evidence(
      testing::read_text(testing::fixture("llama-server/log-cpu-ngl99-default-3f545be.txt")),
      "server.log");
  EXPECT_FALSE(quiet.against_gpu());
  EXPECT_FALSE(quiet.all_layers_on_gpu());
}

TEST(VerifyGpuEvidence, NoUsableGpuWarningIsEvidenceAgainst) {
  // What common/arg.cpp prints to stderr for -ngl when no backend can offload (a build with
  // neither a GPU nor the RPC backend), before the log proper starts.
  const std::string log =
      "warning: no usable GPU found, --gpu-layers option will be ignored\n"
      "warning: one possible reason is that llama.cpp was compiled without GPU support\n"
      "warning: consult docs/build.md for compilation instructions\n"
      "0.00.013.948 I cmn  common_param: common_params_print_info: verbosity = 3 (adjust with "
      "the `-lv N` CLI arg)\n";
  const GpuLogEvidence evidence = read_gpu_evidence(log, "server.log");
  EXPECT_EQ(evidence.no_gpu_line,
            "warning: no usable GPU found, --gpu-layers option will be ignored");
  EXPECT_TRUE(evidence.against_gpu());
  EXPECT_TRUE(evidence.no_gpu_backend());
  EXPECT_NE(evidence.fix().find("-DGGML_CUDA=ON"), std::string::npos);
}

TEST(VerifyGpuEvidence, CudaLoadLinesShowEveryLayerOnTheGpu) {
  // The lines of llama_model::load_tensors (src/llama-model.cpp) at -lv 4 for a CUDA build.
  const std::string log =
      "load_tensors: offloading output layer to GPU\n"
      "load_tensors: offloading 7 repeating layers to GPU\n"
      "load_tensors: offloaded 9/9 layers to GPU\n"
      "load_tensors:        CUDA0 model buffer size =  1858.63 MiB\n"
      "load_tensors:   CPU_Mapped model buffer size =     2.50 MiB\n";
  const GpuLogEvidence all = read_gpu_evidence(log, "l");
  EXPECT_TRUE(all.all_layers_on_gpu());
  EXPECT_FALSE(all.against_gpu());
  EXPECT_EQ(all.device_buffers, (std::vector<std::string>{"CUDA0 1858.63 MiB"}));
  EXPECT_EQ(all.host_buffers, (std::vector<std::string>{"CPU_Mapped 2.50 MiB"}));
  // "offloaded 9/9" without a buffer on a device proves nothing (see the CPU build's log).
  EXPECT_FALSE(
      read_gpu_evidence("load_tensors: offloaded 9/9 layers to GPU\n", "l").all_layers_on_gpu());

  const GpuLogEvidence partial =
      read_gpu_evidence("load_tensors: offloaded 5/9 layers to GPU\n", "l");
  EXPECT_TRUE(partial.against_gpu());
  EXPECT_FALSE(partial.all_layers_on_gpu());
}

TEST(VerifyGpuEvidence, OnlyTheLatestStartCounts) {
  const std::string earlier =
      "warning: no usable GPU found, --gpu-layers option will be ignored\n"
      "common_params_print_info: verbosity = 4 (adjust with the `-lv N` CLI arg)\n";
  const std::string later =
      "==== gb10tune 0.1.0 launch at 2026-11-29T11:00:00Z: /opt/llama-server -ngl 99\n"
      "load_tensors: offloaded 9/9 layers to GPU\n";
  EXPECT_TRUE(read_gpu_evidence(earlier, "l").against_gpu());
  EXPECT_FALSE(read_gpu_evidence(earlier + later, "l").against_gpu());
  // Without launch headers a start begins at its first line and the warnings just above it.
  const std::string restart =
      "warning: no usable GPU found, --gpu-layers option will be ignored\n"
      "common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)\n";
  EXPECT_EQ(latest_run("old run\n" + restart), restart);
  EXPECT_TRUE(read_gpu_evidence(later + restart, "l").against_gpu());
}

TEST(VerifyGpuEvidence, LayersFlagAloneIsNoEvidence) {
  Finding k1;
  k1.id = "all-layers-on-gpu";
  k1.severity = Severity::ok;
  k1.evidence = "-ngl 99 (from command line: argv[3] -ngl)";
  gpu::NvmlReport nvml;
  nvml.detail = "NVML not loaded";
  Finding unknown = k1;
  confirm_gpu_layers(unknown, nullptr, nvml, 7, {});
  EXPECT_EQ(unknown.severity, Severity::warn);
  EXPECT_NE(unknown.evidence.find("no server log was read"), std::string::npos) << unknown.evidence;
  EXPECT_NE(unknown.fix.find("with gb10tune launch"), std::string::npos) << unknown.fix;
  // Started by launch (the planned weights are known): the fix names NVML, not launch again.
  Expectations launched;
  launched.weights_bytes = 16'800'000'000ull;
  Finding known_size = k1;
  confirm_gpu_layers(known_size, nullptr, nvml, 7, launched);
  EXPECT_EQ(known_size.severity, Severity::warn);
  EXPECT_EQ(known_size.fix.find("gb10tune launch"), std::string::npos) << known_size.fix;
  EXPECT_NE(known_size.fix.find("libnvidia-ml.so.1"), std::string::npos) << known_size.fix;

  const GpuLogEvidence cpu = read_gpu_evidence(cpu_server_log(), "server.log");
  Finding against = k1;
  confirm_gpu_layers(against, &cpu, nvml, 7, {});
  EXPECT_EQ(against.severity, Severity::fail);
  EXPECT_NE(against.evidence.find("no model buffer on a GPU"), std::string::npos)
      << against.evidence;

  nvml.loaded = true;
  nvml.processes.push_back({0, 7, 18ull << 30});
  Expectations expected;
  expected.weights_bytes = 16'800'000'000ull;
  Finding confirmed = k1;
  confirm_gpu_layers(confirmed, nullptr, nvml, 7, expected);
  EXPECT_EQ(confirmed.severity, Severity::ok) << confirmed.evidence;
}

// A machine without an NVIDIA GPU (no driver entry, no NVML; as the real CPU build of
// llama-server was captured on): the GPU checks K1 and K3 do not apply there, whatever -ngl
// asks and whatever the log says of layers "offloaded" (README: GPU advice is marked not
// applicable, never applied blindly). Not applicable is not a warning: the rest decides.
TEST(Verify, CpuOnlyMachineMarksTheGpuChecksNotApplicable) {
  Machine machine("verify-cpu-only");
  machine.services.read_log = [&](const std::string& path) -> Expected<std::string> {
    return testing::read_text(machine.root.resolve(path));
  };
  machine.services.check_flags = [](const ProcessSnapshot&, const launch::LaunchRecord*) {
    FlagsOutcome outcome;
    Finding k1;
    k1.id = "all-layers-on-gpu";
    k1.fact = "K1";
    k1.evidence = "-ngl 99 (from command line: argv[3] -ngl)";
    outcome.findings.push_back(k1);
    return outcome;
  };
  const VerifyResult result = machine.run();
  ASSERT_EQ(result.servers.size(), 1u);
  for (const char* id : {"device-memory-path", "all-layers-on-gpu"}) {
    const Finding* finding = find(result, id);
    ASSERT_NE(finding, nullptr) << id;
    EXPECT_EQ(finding->severity, Severity::not_applicable) << id << ": " << finding->evidence;
    EXPECT_EQ(finding->evidence.rfind("not applicable: this machine has no NVIDIA GPU", 0), 0u)
        << finding->evidence;
    EXPECT_TRUE(finding->fix.empty()) << finding->fix;
  }
  EXPECT_EQ(result.worst(), Severity::ok);
}

// The same server on a machine whose NVIDIA driver lists a GPU (NVML loaded, the server not on
// it): a CPU build there leaves the GPU unused, and K1 and K3 fail as before.
TEST(Verify, CpuBuildBesideAGpuStillFailsTheGpuChecks) {
  Machine machine("verify-cpu-only");
  machine.services.read_log = [&](const std::string& path) -> Expected<std::string> {
    return testing::read_text(machine.root.resolve(path));
  };
  machine.services.nvml = [] {
    gpu::NvmlReport nvml;
    nvml.loaded = true;
    return nvml;
  };
  machine.services.check_flags = [](const ProcessSnapshot&, const launch::LaunchRecord*) {
    FlagsOutcome outcome;
    Finding k1;
    k1.id = "all-layers-on-gpu";
    k1.fact = "K1";
    outcome.findings.push_back(k1);
    return outcome;
  };
  const VerifyResult result = machine.run();
  EXPECT_EQ(find(result, "device-memory-path")->severity, Severity::fail);
  EXPECT_EQ(find(result, "all-layers-on-gpu")->severity, Severity::fail);
}

// A rule its launch chose (launch's own settings, started with a warning) is the same ⚠ in
// verify; one passed with --force stays ✘ and says so; without the record both stay ✘.
TEST(Verify, RulesTheLaunchChoseOrForcedAreShownAsLaunchSaidThem) {
  const auto failing = [](const ProcessSnapshot&, const launch::LaunchRecord*) {
    FlagsOutcome outcome;
    for (const char* id : {"flash-attention-on", "kvu-with-cache-ram"}) {
      Finding rule;
      rule.id = id;
      rule.severity = Severity::fail;
      rule.evidence = "as set";
      outcome.findings.push_back(rule);
    }
    return outcome;
  };
  Machine machine("verify-clean");
  machine.services.check_flags = failing;
  auto record = record_for(4242, 123456);
  record.rules_chosen = {"flash-attention-on"};
  record.rules_forced = {"kvu-with-cache-ram"};
  machine.services.record = record;
  const VerifyResult launched = machine.run();
  ASSERT_EQ(launched.servers.size(), 1u);
  ASSERT_EQ(launched.servers[0].found_by, "launch record");
  EXPECT_EQ(find(launched, "flash-attention-on")->severity, Severity::warn);
  EXPECT_NE(
      find(launched, "flash-attention-on")->evidence.find("asked for with launch's own settings"),
      std::string::npos);
  EXPECT_EQ(find(launched, "kvu-with-cache-ram")->severity, Severity::fail);
  EXPECT_NE(find(launched, "kvu-with-cache-ram")->evidence.find("launched with --force"),
            std::string::npos);

  Machine by_hand("verify-clean");
  by_hand.services.check_flags = failing;
  const VerifyResult started = by_hand.run();
  EXPECT_EQ(find(started, "flash-attention-on")->severity, Severity::fail);
  EXPECT_EQ(find(started, "flash-attention-on")->evidence, "as set");
}

TEST(Verify, UrlFollowsHostAndPort) {
  EXPECT_EQ(url_from_process({"llama-server"}, nullptr), "http://127.0.0.1:8080");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "0.0.0.0", "--port=9931"}, nullptr),
            "http://127.0.0.1:9931");
  platform::Environment env;
  env.set("LLAMA_ARG_PORT", "8181");
  EXPECT_EQ(url_from_process({"llama-server"}, &env), "http://127.0.0.1:8181");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "::1"}, nullptr), "http://[::1]:8080");
}

TEST(Verify, UrlOfAnAnyAddressServerIsTheLoopbackInEverySpelling) {
  // llama-server binds --host through getaddrinfo(): each of these is every interface.
  for (const char* host : {"0", "0.0", "0x0", "000.0.0.0", "0.0.0", "0.0.0.0", ""}) {
    EXPECT_EQ(url_from_process({"llama-server", "--host", host, "--port", "9931"}, nullptr),
              "http://127.0.0.1:9931")
        << host;
  }
  for (const char* host : {"::", "0:0::0", "[::]", "::0"}) {
    EXPECT_EQ(url_from_process({"llama-server", "--host", host}, nullptr), "http://[::1]:8080")
        << host;
  }
  EXPECT_EQ(url_from_process({"llama-server", "--host", "::ffff:0.0.0.0"}, nullptr),
            "http://127.0.0.1:8080");
  platform::Environment env;
  env.set("LLAMA_ARG_HOST", "0x0");
  EXPECT_EQ(url_from_process({"llama-server"}, &env), "http://127.0.0.1:8080");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "[fe80::1]"}, nullptr),
            "http://[fe80::1]:8080");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "localhost"}, nullptr),
            "http://localhost:8080");
}

}  // namespace
}  // namespace gb10tune::verify
