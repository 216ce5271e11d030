#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/launch/launch_record.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/untrusted_binary.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::run_cli_on;

platform::Environment verify_env_with_state(const testing::TempDir& dir) {
  platform::Environment env;
  env.set("HOME", (dir.path() / "home").string());
  env.set("XDG_STATE_HOME", (dir.path() / "state").string());
  env.set("PATH", "/nonexistent");
  return env;
}

// The --help of the 2026-08 llama-server build, for the flags check of a captured machine.
std::string server_help() {
  return testing::fixture("llama-server/help-2026-08-commit-3f545be.txt").string();
}

// Writes a launch record for `pid` started at `start` under the state dir of `dir`.
void write_record(const testing::TempDir& dir, int pid, std::uint64_t start) {
  const auto state = dir.path() / "state" / "gb10tune";
  ASSERT_TRUE(trust::ensure_private_dir(state));
  launch::LaunchRecord record;
  record.pid = pid;
  record.start_time_ticks = start;
  record.server_path = "/opt/llama.cpp/build/bin/llama-server";
  record.url = "http://127.0.0.1:8080";
  record.log_path = "/var/log/llama-server.log";
  record.launched_at = "2026-11-29T11:00:00Z";
  record.slots = 3;
  record.ctx_per_slot = 196608;
  record.kv_unified = true;
  record.mtp = true;
  record.draft_n_max = 4;
  ASSERT_TRUE(launch::write_launch_record(launch::StatePaths::under(state).record, record));
}

TEST(CliVerify, ManagedServerFailsWithTheChecklist) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-managed", {"verify", "--server-help", server_help()},
                                 verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  testing::expect_golden("verify-managed.txt", result.out);
}

TEST(CliVerify, CleanServerTextMatchesGolden) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-clean", {"verify", "--server-help", server_help()},
                                 verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("verify-clean.txt", result.out);
}

// A CPU-only llama-server started by hand with -ngl 99 and its stderr in a file, on a machine
// without an NVIDIA GPU (no driver entry, no NVML): the GPU checks K1 and K3 are not
// applicable there (README), neither failed nor warned; the flags' own warnings remain.
TEST(CliVerify, CpuOnlyMachineMarksTheGpuChecksNotApplicable) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-cpu-only", {"verify", "--server-help", server_help()},
                                 verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("verify-cpu-only.txt", result.out);
}

TEST(CliVerify, UnreadableEnvironFailsAndSaysSudo) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-unreadable", {"verify"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1);
  testing::expect_golden("verify-unreadable.txt", result.out);
}

TEST(CliVerify, ScriptNamedLlamaServerIsNotAServer) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-script", {"verify"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1);
  testing::expect_golden("verify-script.txt", result.out);
}

TEST(CliVerify, ZombieJson) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-zombie", {"verify", "--json"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1);
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["command"], "verify");
  EXPECT_EQ(doc["verdict"], "fail");
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_EQ(doc["error"], "no llama-server is running");
  EXPECT_EQ(doc["servers"], json::array());
  ASSERT_EQ(doc["notes"].size(), 1u);
  EXPECT_EQ(doc["notes"][0]["id"], "exited-server");
}

TEST(CliVerify, ReusedPidOfTheLaunchRecordFails) {
  testing::TempDir dir;
  write_record(dir, 4242, 123456);
  const auto result =
      run_cli_on("verify-pid-reuse", {"verify", "--json"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["error"], "no llama-server is running");
  ASSERT_EQ(doc["notes"].size(), 1u);
  EXPECT_EQ(doc["notes"][0]["id"], "stale-launch-record");
}

TEST(CliVerify, LaunchRecordOfTheRunningServerIsUsed) {
  testing::TempDir dir;
  write_record(dir, 4242, 123456);
  const auto result = run_cli_on("verify-clean", {"verify", "--json"}, verify_env_with_state(dir));
  const json doc = json::parse(result.out);
  ASSERT_EQ(doc["servers"].size(), 1u);
  EXPECT_EQ(doc["servers"][0]["found_by"], "launch record");
  EXPECT_EQ(doc["servers"][0]["pid"], 4242);
}

// Issue 22 item 5: a state directory its group may write is refused before its launch record
// (the pid verify would check, the log it would read) is believed.
TEST(CliVerify, GroupWritableStateDirIsRefusedBeforeTheRecordIsRead) {
  testing::TempDir dir;
  write_record(dir, 4242, 123456);
  const auto state = dir.path() / "state" / "gb10tune";
  const std::string refusal = testing::make_group_writable(state);
  const auto result = run_cli_on("verify-clean", {"verify"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_FALSE(testing::contains(result.out, "4242")) << result.out;
  EXPECT_TRUE(testing::contains(result.err, refusal)) << result.err;
  EXPECT_TRUE(testing::contains(result.err, "chmod 700 " + state.string())) << result.err;
}

TEST(CliVerify, PlanVsMeasuredCountsTheLaunchedProjector) {
  testing::TempDir dir;
  const auto state = dir.path() / "state" / "gb10tune";
  ASSERT_TRUE(trust::ensure_private_dir(state));
  launch::LaunchRecord record;
  record.pid = 4242;
  record.start_time_ticks = 123456;
  record.server_path = "/opt/llama.cpp/build/bin/llama-server";
  record.url = "http://127.0.0.1:8080";
  record.mmproj_path = "/models/mmproj-F16.gguf";
  record.expected_weights_bytes = 1ull << 30;
  record.expected_load_bytes = 3ull << 30;
  record.expected_projector_bytes = 900ull << 20;
  record.backend = "cpu";
  const auto plan_vs_measured = [&]() {
    EXPECT_TRUE(launch::write_launch_record(launch::StatePaths::under(state).record, record));
    const auto result =
        run_cli_on("verify-clean", {"verify", "--json"}, verify_env_with_state(dir));
    const json doc = json::parse(result.out);
    EXPECT_EQ(doc["servers"].size(), 1u) << result.out;
    for (const auto& finding : doc["servers"][0]["checks"]) {
      if (finding["id"] == "plan-vs-measured") {
        return finding;
      }
    }
    ADD_FAILURE() << result.out;
    return json::object();
  };
  // The process (RSS 2.0 GiB) against a record that does not say what is touched only as
  // batches use it: a third below the whole figure, a warning.
  json finding = plan_vs_measured();
  EXPECT_NE(finding["evidence"].get<std::string>().find(
                "plan at load 3.0 GiB (the projector's weights and compute buffer 900.0 MiB "
                "included)"),
            std::string::npos)
      << finding.dump();
  EXPECT_EQ(finding["severity"], "warn") << finding.dump();
  // The record says 1 GiB of it is (a CPU server's compute buffers): like with like, ok.
  record.expected_on_demand_bytes = 1ull << 30;
  finding = plan_vs_measured();
  EXPECT_EQ(finding["severity"], "ok") << finding.dump();
  EXPECT_NE(finding["evidence"].get<std::string>().find(
                "plan at load 2.0 GiB (the projector's weights and compute buffer 900.0 MiB "
                "included), 3.0 GiB with the 1.0 GiB of buffers"),
            std::string::npos)
      << finding.dump();
}

// A CUDA server split over two 24 GB GPUs (verify-dgpu: NVML lists pid 4242 with 10 GiB on
// CUDA0 and 9 GiB on CUDA1, RSS 1 GiB). `devices` is the plan.devices of the record's plan
// document, as launch writes it; null/absent stand for one pool / an older gb10tune.
void write_dgpu_record(const testing::TempDir& dir, const std::optional<json>& devices) {
  const auto state = dir.path() / "state" / "gb10tune";
  ASSERT_TRUE(trust::ensure_private_dir(state));
  launch::LaunchRecord record;
  record.pid = 4242;
  record.start_time_ticks = 123456;
  record.server_path = "/opt/llama.cpp/build/bin/llama-server";
  record.url = "http://127.0.0.1:8080";
  record.expected_weights_bytes = 17ull << 30;
  record.expected_load_bytes = 20ull << 30;
  record.backend = "cuda";
  record.plan = {{"plan", {{"weights_bytes", 17ull << 30}}}};
  if (devices) {
    record.plan["plan"]["devices"] = *devices;
  }
  ASSERT_TRUE(launch::write_launch_record(launch::StatePaths::under(state).record, record));
}

json dgpu_devices(std::uint64_t cuda1_planned) {
  const auto gpu = [](const char* name, const char* bus, std::uint64_t total) {
    return json{{"name", name},
                {"description", "NVIDIA GeForce RTX 4090"},
                {"pci_bus_id", bus},
                {"total_bytes", total}};
  };
  return {{"gpus",
           {gpu("CUDA0", "0000:01:00.0", (10ull << 30) + (200ull << 20)),
            gpu("CUDA1", "0000:02:00.0", cuda1_planned)}},
          {"host",
           {{"weights_bytes", 524ull << 20},
            {"cache_bytes", 0},
            {"buffers_bytes", 40ull << 20},
            {"projector_bytes", 0},
            {"runtime_bytes", 310ull << 20},
            {"total_bytes", 1000ull << 20}}}};
}

std::vector<json> checks_with_id(const json& doc, const std::string& id) {
  std::vector<json> out;
  for (const json& finding : doc["servers"][0]["checks"]) {
    if (finding["id"] == id) {
      out.push_back(finding);
    }
  }
  return out;
}

TEST(CliVerify, EachGpuAndTheHostAreCheckedAgainstTheirPlan) {
  testing::TempDir dir;
  write_dgpu_record(dir, dgpu_devices(9ull << 30));
  auto result = run_cli_on("verify-dgpu", {"verify", "--json"}, verify_env_with_state(dir));
  json doc = json::parse(result.out);
  ASSERT_EQ(doc["servers"].size(), 1u) << result.out;
  auto devices = checks_with_id(doc, "device-plan-vs-measured");
  ASSERT_EQ(devices.size(), 2u) << result.out;
  EXPECT_EQ(devices[0]["severity"], "ok") << devices[0].dump();
  EXPECT_NE(devices[0]["summary"].get<std::string>().find("CUDA0 (NVIDIA GeForce RTX 4090)"),
            std::string::npos);
  EXPECT_NE(devices[0]["evidence"].get<std::string>().find("NVML per-process"), std::string::npos);
  EXPECT_EQ(devices[1]["severity"], "ok") << devices[1].dump();
  const auto host = checks_with_id(doc, "host-plan-vs-measured");
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0]["severity"], "ok") << host[0].dump();

  // CUDA1 planned at 7 GiB holds 9: a warning naming CUDA1.
  testing::TempDir over;
  write_dgpu_record(over, dgpu_devices(7ull << 30));
  result = run_cli_on("verify-dgpu", {"verify", "--json"}, verify_env_with_state(over));
  doc = json::parse(result.out);
  devices = checks_with_id(doc, "device-plan-vs-measured");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["severity"], "ok");
  EXPECT_EQ(devices[1]["severity"], "warn");
  EXPECT_NE(devices[1]["evidence"].get<std::string>().find("error +28.6%"), std::string::npos)
      << devices[1].dump();

  // The text names each device.
  result = run_cli_on("verify-dgpu", {"verify"}, verify_env_with_state(over));
  EXPECT_NE(result.out.find("CUDA1 (NVIDIA GeForce RTX 4090) holds what its plan put there"),
            std::string::npos)
      << result.out;
}

TEST(CliVerify, ARecordWithoutAPerDevicePlanIsUnknownOnADiscreteGpu) {
  testing::TempDir dir;
  write_dgpu_record(dir, std::nullopt);  // a record of a gb10tune before per-device plans
  const auto result = run_cli_on("verify-dgpu", {"verify", "--json"}, verify_env_with_state(dir));
  const json doc = json::parse(result.out);
  const auto devices = checks_with_id(doc, "device-plan-vs-measured");
  ASSERT_EQ(devices.size(), 1u) << result.out;
  EXPECT_EQ(devices[0]["severity"], "warn");
  EXPECT_EQ(devices[0]["evidence"].get<std::string>().rfind("unknown: ", 0), 0u)
      << devices[0].dump();
  EXPECT_TRUE(checks_with_id(doc, "host-plan-vs-measured").empty());
}

TEST(CliVerify, PidOfNoProcessFails) {
  testing::TempDir dir;
  const auto result = run_cli_on("verify-clean", {"verify", "--pid", "31999", "--json"},
                                 verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 1);
  const json doc = json::parse(result.out);
  EXPECT_NE(doc["error"].get<std::string>().find("no process 31999"), std::string::npos);
}

TEST(CliVerify, StrictFailsOnWarnings) {
  testing::TempDir dir;
  const auto relaxed = run_cli_on("verify-clean", {"verify", "--json"}, verify_env_with_state(dir));
  const json doc = json::parse(relaxed.out);
  ASSERT_NE(doc["verdict"], "ok");  // the fixture's log shows a GGML_NATIVE build at least
  const auto strict =
      run_cli_on("verify-clean", {"verify", "--strict"}, verify_env_with_state(dir));
  EXPECT_EQ(strict.exit_code, 1);
}

TEST(CliVerify, BadPidIsAUsageError) {
  testing::TempDir dir;
  const auto result =
      run_cli_on("verify-clean", {"verify", "--pid", "-3"}, verify_env_with_state(dir));
  EXPECT_EQ(result.exit_code, 2);
}

TEST(CliVerify, RealBinaryExitsOneWhenNoServerRuns) {
  const auto result = testing::run_binary(
      {"--sysroot", testing::sysroot_fixture("verify-zombie").string(), "verify"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("no llama-server is running"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("zombie"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace gb10tune

namespace gb10tune {
namespace {

using namespace std::chrono_literals;

// The finding `id` of the first server of a verify JSON document (null when absent).
json check_of(const json& doc, std::string_view id) {
  for (const json& check : doc["servers"][0]["checks"]) {
    if (check["id"] == id) {
      return check;
    }
  }
  return nullptr;
}

TEST(CliVerifyStandIn, VariableSetByThePlainStartFailsNamingIt) {
  const int port = testing::free_tcp_port();
  testing::StandInServer server(
      {"--port", std::to_string(port), "-ngl", "99", "-fa", "on", "-np", "1"},
      {{"GGML_CUDA_ENABLE_UNIFIED_MEMORY", "0"}});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto result =
      testing::run_binary({"verify", "--pid", std::to_string(server.pid()), "--json", "--smoke"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  const json doc = json::parse(result.out.substr(result.out.find('{')));
  const json env = check_of(doc, "unified-memory-env");
  ASSERT_FALSE(env.is_null()) << result.out;
  EXPECT_EQ(env["severity"], "fail");
  EXPECT_NE(env["evidence"].get<std::string>().find("GGML_CUDA_ENABLE_UNIFIED_MEMORY=0"),
            std::string::npos);
  EXPECT_EQ(check_of(doc, "server-health")["severity"], "ok") << result.out;
  EXPECT_EQ(check_of(doc, "smoke-completion")["severity"], "ok") << result.out;
}

TEST(CliVerifyStandIn, CleanEnvironmentPassesTheEnvironmentCheck) {
  const int port = testing::free_tcp_port();
  testing::StandInServer server({"--port", std::to_string(port)}, {},
                                {"GGML_CUDA_ENABLE_UNIFIED_MEMORY"});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto result =
      testing::run_binary({"verify", "--pid", std::to_string(server.pid()), "--json"});
  const json doc = json::parse(result.out.substr(result.out.find('{')));
  EXPECT_EQ(check_of(doc, "unified-memory-env")["severity"], "ok") << result.out;
  EXPECT_EQ(check_of(doc, "server-health")["severity"], "ok") << result.out;
}

// The issue-18 model started by hand without --spec-type: the flags rule and the server's
// own answer (/slots: no slot drafts) both fail, naming the missing flag.
TEST(CliVerifyStandIn, MtpModelStartedWithoutSpecTypeFailsNamingTheFlag) {
  testing::TempDir dir;
  const auto model = dir.path() / "tiny-qwen35.gguf";
  testing::tiny_qwen35_model().write(model);
  const int port = testing::free_tcp_port();
  testing::StandInServer server({"--port", std::to_string(port), "-m", model.string(), "-np", "3",
                                 "-c", "24576", "-kvu", "-fa", "on", "-ngl", "99"});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto result = testing::run_binary({"verify", "--pid", std::to_string(server.pid())});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("✘ MTP speculative decoding when the model has an MTP head [K4]: the "
                            "model has an MTP head but --spec-type not set"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("✘ the server drafts as planned [K4]: off according to /slots, but "
                            "the model's MTP head asks for draft-mtp: /slots: 0 of 3 slots "
                            "speculative; flags: --spec-type not set"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("fix: --spec-type draft-mtp is missing"), std::string::npos)
      << result.out;
  // The rest matches the flags: 3 slots sharing the 24576-cell pool.
  EXPECT_NE(result.out.find("✔ /props matches the flags [K9]: 3 slots, context 24576 per slot"),
            std::string::npos)
      << result.out;
}

// The flags ask for draft-mtp but the draft context failed to initialise: /slots says the
// server runs without it, and verify says which source says what.
TEST(CliVerifyStandIn, FlagsAskingForMtpButSlotsWithoutDraftFails) {
  testing::TempDir dir;
  const auto model = dir.path() / "tiny-qwen35.gguf";
  testing::tiny_qwen35_model().write(model);
  const int port = testing::free_tcp_port();
  testing::StandInServer server(
      {"--port", std::to_string(port), "-m", model.string(), "-np", "1", "-c", "8192", "-fa", "on",
       "-ngl", "99", "--spec-type", "draft-mtp", "--spec-draft-n-max", "4"},
      {{"STANDIN_SPEC_FAILS", "1"}});
  ASSERT_TRUE(server.wait_ready(port, 10s)) << server.log();
  const auto result =
      testing::run_binary({"verify", "--pid", std::to_string(server.pid()), "--json"});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  const json doc = json::parse(result.out.substr(result.out.find('{')));
  EXPECT_EQ(check_of(doc, "mtp-when-model-has-head")["severity"], "ok") << result.out;
  const json spec = check_of(doc, "speculative-decoding");
  EXPECT_EQ(spec["severity"], "fail") << result.out;
  const std::string evidence = spec["evidence"];
  EXPECT_NE(evidence.find("off according to /slots, but the flags ask for draft-mtp"),
            std::string::npos)
      << evidence;
  EXPECT_NE(evidence.find("flags: --spec-type draft-mtp, --spec-draft-n-max 4 (command line"),
            std::string::npos)
      << evidence;
  EXPECT_NE(spec["fix"].get<std::string>().find("speculative decoding not supported"),
            std::string::npos);
}

// Runs `verify --pid` on a stand-in started from `binary`, with STANDIN_RECORD set for verify
// (the stand-in writes the file whenever it runs, --help and -lv 4 included) and a state
// directory of the test's own. Returns the JSON document and whether the binary was run again.
struct UntrustedVerify {
  json doc;
  bool binary_ran = false;
  std::string out;
};
UntrustedVerify verify_server_started_from(const std::filesystem::path& binary) {
  testing::TempDir dir;
  const auto ran = dir.path() / "ran.json";
  const int port = testing::free_tcp_port();
  testing::StandInServer server({"--port", std::to_string(port)}, {}, {}, binary);
  UntrustedVerify result;
  if (!server.wait_ready(port, 10s)) {
    ADD_FAILURE() << server.log();
    return result;
  }
  const auto run = testing::run_binary(
      {"verify", "--pid", std::to_string(server.pid()), "--json"},
      {"STANDIN_RECORD=" + ran.string(), "XDG_STATE_HOME=" + (dir.path() / "state").string()});
  result.out = run.out;
  result.doc =
      json::parse(run.out.substr(std::min(run.out.find('{'), run.out.size())), nullptr, false);
  result.binary_ran = std::filesystem::exists(ran);
  return result;
}

// Issue 22 item 1: `sudo gb10tune verify` ran any user's llama-server binary (--help, -lv 4) as
// root. A binary owned by another user is never run; its flags are "not checked", a warning.
TEST(CliVerifyStandIn, ServerBinaryOwnedByAnotherUserIsNotRun) {
  testing::TempDir dir;
  const auto foreign = testing::copy_owned_by_another_user(dir, testing::stand_in_server_path());
  if (!foreign) {
    GTEST_SKIP() << "giving a file to another user needs root (CI runs as root); the rule itself "
                    "is covered by PathRules.*";
  }
  const UntrustedVerify result = verify_server_started_from(*foreign);
  EXPECT_FALSE(result.binary_ran) << "verify ran " << *foreign;
  const json flags = check_of(result.doc, "server-flags");
  ASSERT_FALSE(flags.is_null()) << result.out;
  EXPECT_EQ(flags["severity"], "warn") << result.out;
  const std::string evidence = flags["evidence"];
  EXPECT_NE(evidence.find("not checked (binary owned by "), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("(uid 65534), not by root"), std::string::npos) << evidence;
  EXPECT_NE(flags["fix"].get<std::string>().find("chown root:root " + foreign->string()),
            std::string::npos)
      << flags["fix"];
}

// The same for a binary in a directory anyone may write (no root needed to set this up).
TEST(CliVerifyStandIn, ServerBinaryInADirectoryOthersCanWriteIsNotRun) {
  testing::TempDir dir;
  const auto open = testing::copy_into_open_dir(dir, testing::stand_in_server_path());
  const UntrustedVerify result = verify_server_started_from(open);
  EXPECT_FALSE(result.binary_ran) << "verify ran " << open;
  const json flags = check_of(result.doc, "server-flags");
  ASSERT_FALSE(flags.is_null()) << result.out;
  EXPECT_EQ(flags["severity"], "warn") << result.out;
  EXPECT_NE(flags["evidence"].get<std::string>().find(
                fmt::format("not checked (binary in {}, a directory writable by its group and "
                            "others (mode 0777))",
                            open.parent_path().string())),
            std::string::npos)
      << flags["evidence"];
  EXPECT_NE(flags["fix"].get<std::string>().find("chmod go-w " + open.parent_path().string()),
            std::string::npos)
      << flags["fix"];
}

// The stand-in from the build tree (root's or yours, in directories no one else writes) is
// still run: its flags are checked.
TEST(CliVerifyStandIn, ServerBinaryOfTheBuildTreeIsRun) {
  const UntrustedVerify result = verify_server_started_from(testing::stand_in_server_path());
  EXPECT_TRUE(result.binary_ran);
  EXPECT_TRUE(check_of(result.doc, "server-flags").is_null()) << result.out;
}

}  // namespace
}  // namespace gb10tune
