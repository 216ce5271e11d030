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
  Expected<PropsAnswer> props_answer = PropsAnswer{589824, 3, "/models/m.gguf", "b6500", true};
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
  probe.props_answer = PropsAnswer{589824, 4, "", "", false};
  findings = check_server(probe, expected, "u");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[1].severity, Severity::fail);
  EXPECT_NE(findings[1].evidence.find("4 slots"), std::string::npos);
  EXPECT_NE(findings[1].evidence.find("speculative decoding off"), std::string::npos);
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

TEST(Verify, PlanVsMeasuredShowsTheErrorAndWarnsAboveThePlan) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory = sys::ProcessMemory{1000ull << 20, 400ull << 20, 600ull << 20, 0, "status"};
  gpu::NvmlReport nvml;
  Expectations expected;
  // No planned figure (a server launch did not start): no finding.
  ASSERT_EQ(check_memory(snapshot, nvml, expected).size(), 1u);
  expected.weights_bytes = 580ull << 20;
  expected.load_bytes = 980ull << 20;
  expected.backend = "cpu";
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
