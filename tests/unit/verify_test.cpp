#include "gb10tune/verify/verify.hpp"

#include <gtest/gtest.h>

#include "gb10tune/report/verify_report.hpp"
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
                    std::string(report::severity_id(finding.severity)));
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
  snapshot.memory = sys::ProcessMemory{90ull << 30, 89ull << 30, 1ull << 30, 0, "status"};
  gpu::NvmlReport nvml;
  nvml.detail = "NVML not loaded";
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::warn);
  nvml.loaded = true;  // loaded, pid not listed: nothing on the GPU
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::fail);
  nvml.processes.push_back({0, 7, 58ull << 30});
  EXPECT_EQ(check_memory(snapshot, nvml, {})[0].severity, Severity::ok);
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

TEST(Verify, UrlFollowsHostAndPort) {
  EXPECT_EQ(url_from_process({"llama-server"}, nullptr), "http://127.0.0.1:8080");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "0.0.0.0", "--port=9931"}, nullptr),
            "http://127.0.0.1:9931");
  platform::Environment env;
  env.set("LLAMA_ARG_PORT", "8181");
  EXPECT_EQ(url_from_process({"llama-server"}, &env), "http://127.0.0.1:8181");
  EXPECT_EQ(url_from_process({"llama-server", "--host", "::1"}, nullptr), "http://[::1]:8080");
}

}  // namespace
}  // namespace gb10tune::verify
