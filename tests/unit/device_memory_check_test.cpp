// verify on discrete GPUs: each device's memory against the launch record's plan for it, and
// the host side; records without a per-device plan are "unknown", never ok.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/render/plan_render.hpp"
#include "gb10tune/util/text_file.hpp"
#include "gb10tune/verify/checks.hpp"
#include "gb10tune/verify/verify.hpp"
#include "support/captured_header.hpp"
#include "support/test_context.hpp"

namespace gb10tune::verify {
namespace {

using nlohmann::json;

constexpr char kH200Bus[] = "0000:19:00.0";

// A launch record for pid 7 whose plan document is `plan`'s, as launch writes it.
launch::LaunchRecord record_of(const model::ModelFacts& model, const plan::PlanConfig& config,
                               const plan::MemoryPlan& plan) {
  launch::LaunchRecord record;
  record.pid = 7;
  record.backend = "cuda";
  record.expected_weights_bytes = plan.weights_bytes;
  record.expected_kv_bytes = plan.cache_bytes();
  record.expected_load_bytes = plan.load_bytes();
  record.plan = render::plan_to_json(model, config, plan);
  record.planned = launch::read_recorded_plan(record.plan);
  return record;
}

ProcessSnapshot snapshot_with_rss(std::uint64_t rss) {
  ProcessSnapshot snapshot;
  snapshot.process.stat.pid = 7;
  snapshot.memory = sys::ProcessMemory{rss, rss / 2, rss / 2, 0, "status", std::nullopt};
  return snapshot;
}

std::vector<Finding> with_id(const std::vector<Finding>& findings, const std::string& id) {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (f.id == id) {
      out.push_back(f);
    }
  }
  return out;
}

// The real CUDA llama-server runs on an H200 (tests/fixtures/llama-server/memory/devices.json):
// the launch record of each plan, read back by verify, against NVML's per-process figure for
// the GPU and the process's RSS: every device and host finding passes.
TEST(DeviceMemoryCheck, CapturedH200RunsPassOnTheDeviceAndTheHost) {
  const json cases = testing::fixture_json("llama-server/memory/cases.json");
  const json runs = testing::fixture_json("llama-server/memory/devices.json");
  testing::TempDir dir;
  testing::GgufWriter w = testing::captured_header(cases.at("models").at("llama-2b"));
  w.write(dir.path() / "llama-2b.gguf");
  const auto file = gguf::read_gguf(dir.path() / "llama-2b.gguf");
  ASSERT_TRUE(file);
  const auto model = model::describe_model(*file);
  ASSERT_TRUE(model);
  plan::PlanBudget budget;
  budget.mem_available = 120ull << 30;
  plan::GpuBudget h200{"CUDA0", "NVIDIA H200", runs.at("free_mib").get<std::uint64_t>() << 20,
                       plan::kDefaultGpuReserveBytes};
  h200.pci_bus_id = kH200Bus;
  budget.gpus.push_back(h200);
  for (const json& run : runs.at("runs")) {
    const std::string name = run.at("name");
    plan::PlanConfig config;
    config.ctx_total = run.at("ctx");
    config.slots = run.at("slots");
    config.kv_unified = run.at("kvu");
    config.flash_attention = run.at("fa");
    config.cache_ram_bytes = 0;  // --cache-ram 0; the default --overhead margin stays
    config.backend = plan::PlanBackend::cuda;
    config.gpu_layers = run.at("ngl").get<std::uint32_t>();
    const auto plan = plan::make_plan(*model, config, budget);
    ASSERT_TRUE(plan && plan->devices) << name;
    const Expectations expected = expectations_from_record(record_of(*model, config, *plan));
    ASSERT_TRUE(expected.devices) << name;
    ASSERT_EQ(expected.devices->size(), 1u);
    EXPECT_EQ(expected.devices->front().pci_bus_id, kH200Bus);
    EXPECT_EQ(expected.devices->front().planned_bytes, plan->devices->gpus[0].total_bytes);

    gpu::NvmlReport nvml;
    nvml.loaded = true;
    const std::uint64_t used = run.at("nvml_mib").get<std::uint64_t>() << 20;
    nvml.memory.push_back({0, kH200Bus, 143771ull << 20, (143156ull << 20) - used});
    nvml.processes.push_back({0, 7, used});
    // The fixture has VmRSS only. The host's mapped weights are file pages (mmap with
    // MAP_POPULATE, as every CPU run of cases.json showed them resident), the rest anonymous.
    const std::uint64_t rss = run.at("vmrss_kib").get<std::uint64_t>() * 1024;
    auto snapshot = snapshot_with_rss(rss);
    snapshot.memory->rss_file = expected.host_weights_bytes;
    snapshot.memory->rss_anon = rss - expected.host_weights_bytes;
    const auto findings = check_device_memory(snapshot, nvml, expected);
    ASSERT_EQ(findings.size(), 2u) << name;
    EXPECT_EQ(findings[0].id, "device-plan-vs-measured");
    EXPECT_EQ(findings[0].severity, Severity::ok) << name << ": " << findings[0].evidence;
    EXPECT_NE(findings[0].evidence.find("NVML per-process"), std::string::npos);
    EXPECT_EQ(findings[1].id, "host-plan-vs-measured");
    EXPECT_EQ(findings[1].severity, Severity::ok) << name << ": " << findings[1].evidence;

    // The same server holding 10% more on the GPU than planned is not ok.
    nvml.processes[0].used_bytes = expected.devices->front().planned_bytes * 11 / 10;
    const auto over = check_device_memory(snapshot_with_rss(1ull << 20), nvml, expected);
    EXPECT_EQ(over[0].severity, Severity::warn) << name;
    EXPECT_NE(over[0].evidence.find("more on this GPU than its plan allowed"), std::string::npos);
  }
}

// Two GPUs: each is matched by PCI bus id, whatever NVML's order; one that NVML does not list
// the server on while the plan puts memory there fails; one short of its plan warns.
TEST(DeviceMemoryCheck, EachGpuIsMatchedByBusIdAndJudgedOnItsOwn) {
  Expectations expected;
  expected.source = "launch record";
  expected.backend = "cuda";
  expected.devices = std::vector<DeviceExpectation>{{"CUDA0", "RTX A", "0000:01:00.0", 10ull << 30},
                                                    {"CUDA1", "RTX B", "0000:02:00.0", 6ull << 30}};
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  nvml.memory.push_back({0, "0000:02:00.0", 24ull << 30, 18ull << 30});  // NVML's order differs
  nvml.memory.push_back({1, "0000:01:00.0", 24ull << 30, 14ull << 30});
  nvml.processes.push_back({1, 7, (10ull << 30) + (100ull << 20)});  // CUDA0: +1.0%
  nvml.processes.push_back({0, 7, 5ull << 30});                      // CUDA1: −16.7%
  auto findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  ASSERT_EQ(findings.size(), 2u);  // no host plan: no host finding
  EXPECT_EQ(findings[0].severity, Severity::ok) << findings[0].evidence;
  EXPECT_NE(findings[0].summary.find("CUDA0"), std::string::npos);
  EXPECT_NE(findings[0].evidence.find("error +1.0%"), std::string::npos) << findings[0].evidence;
  EXPECT_EQ(findings[1].severity, Severity::warn);
  EXPECT_NE(findings[1].evidence.find("less than the plan puts on this GPU"), std::string::npos);

  nvml.processes.pop_back();  // listed on CUDA0 only
  findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  EXPECT_EQ(findings[1].severity, Severity::fail);
  EXPECT_NE(findings[1].evidence.find("holds nothing there"), std::string::npos);

  nvml.memory.pop_back();  // CUDA0's bus id gone from NVML: unknown
  findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  EXPECT_EQ(findings[0].severity, Severity::warn);
  EXPECT_NE(findings[0].evidence.find("measured unknown: NVML reports no GPU at PCI bus id"),
            std::string::npos);
}

// Where NVML has no per-process figure, the GPU's total in use stands in, and the evidence says
// so; above the plan it cannot tell whose memory it is.
TEST(DeviceMemoryCheck, WithoutAPerProcessFigureTheGpuTotalIsUsedAndNamed) {
  Expectations expected;
  expected.source = "launch record";
  expected.backend = "cuda";
  expected.devices = std::vector<DeviceExpectation>{{"CUDA0", "RTX", "0000:01:00.0", 10ull << 30}};
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  nvml.memory.push_back({0, "0000:01:00.0", 24ull << 30, (14ull << 30) - (200ull << 20)});
  gpu::GpuProcessMemory entry{0, 7, 0};
  entry.used_known = false;
  nvml.processes.push_back(entry);
  auto f = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected)[0];
  EXPECT_EQ(f.severity, Severity::ok) << f.evidence;
  EXPECT_NE(f.evidence.find("NVML total in use on the GPU, every process counted (NVML lists the "
                            "process without its memory)"),
            std::string::npos)
      << f.evidence;
  nvml.memory[0].free_bytes = 10ull << 30;  // 14 GiB in use: another process, or the server?
  f = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected)[0];
  EXPECT_EQ(f.severity, Severity::warn);
  EXPECT_NE(f.evidence.find("unknown whether the server holds it"), std::string::npos);
  // Another pid namespace: the pid is not listed at all.
  nvml.processes.clear();
  nvml.memory[0].free_bytes = 14ull << 30;
  f = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected)[0];
  EXPECT_EQ(f.severity, Severity::ok);
  EXPECT_NE(f.evidence.find("is not among NVML's processes"), std::string::npos) << f.evidence;
  // No NVML: unknown.
  nvml = {};
  nvml.detail = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  f = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected)[0];
  EXPECT_EQ(f.severity, Severity::warn);
  EXPECT_NE(f.evidence.find("measured unknown: NVML not loaded"), std::string::npos);
}

// A record written before per-device plans (no plan.devices) or planned as one pool (null),
// on a machine whose NVML reports discrete GPUs: one warning saying unknown, never ok. On a
// GB10 (NVML has no memory figures) and for CPU plans: no device finding at all.
TEST(DeviceMemoryCheck, RecordsWithoutAPerDevicePlanAreUnknownNeverOk) {
  launch::LaunchRecord record;
  record.pid = 7;
  record.backend = "cuda";
  record.expected_weights_bytes = 1ull << 30;
  record.expected_load_bytes = 2ull << 30;
  record.plan = {{"plan", {{"weights_bytes", 1ull << 30}}}};  // an older gb10tune's plan
  record.planned = launch::read_recorded_plan(record.plan);
  Expectations expected = expectations_from_record(record);
  EXPECT_FALSE(expected.devices);
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  nvml.memory.push_back({0, "0000:01:00.0", 24ull << 30, 20ull << 30});
  nvml.processes.push_back({0, 7, 4ull << 30});
  auto findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::warn);
  EXPECT_NE(findings[0].evidence.find("unknown: the launch record has no per-device plan (written "
                                      "by a gb10tune before per-device plans)"),
            std::string::npos)
      << findings[0].evidence;

  record.plan["plan"]["devices"] = nullptr;  // launched as one pool
  record.planned = launch::read_recorded_plan(record.plan);
  expected = expectations_from_record(record);
  findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].evidence.find("planned one pool"), std::string::npos);

  gpu::NvmlReport gb10 = nvml;
  gb10.memory.clear();
  EXPECT_TRUE(check_device_memory(snapshot_with_rss(1ull << 30), gb10, expected).empty());
  record.backend = "cpu";
  EXPECT_TRUE(
      check_device_memory(snapshot_with_rss(1ull << 30), nvml, expectations_from_record(record))
          .empty());
  // A record that predates pci_bus_id: matched when there is one GPU each.
  record.backend = "cuda";
  record.plan["plan"]["devices"] = {{"gpus", {{{"name", "CUDA0"}, {"total_bytes", 4ull << 30}}}}};
  record.planned = launch::read_recorded_plan(record.plan);
  expected = expectations_from_record(record);
  findings = check_device_memory(snapshot_with_rss(1ull << 30), nvml, expected);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::ok) << findings[0].evidence;
}

// A CUDA plan that puts nothing on its GPU and 1000 MiB on the host at load (1100 MiB in all).
Expectations host_only_plan() {
  Expectations expected;
  expected.source = "launch record";
  expected.backend = "cuda";
  expected.devices = std::vector<DeviceExpectation>{{"CUDA0", "RTX", "0000:01:00.0", 0}};
  expected.host_load_bytes = 1000ull << 20;
  expected.host_total_bytes = 1100ull << 20;
  return expected;
}

// The host side: RSS against the host part of the plan (its total: with the prompt cache's
// limit, the margin and the calibration), a warning above it by more than 5%.
TEST(DeviceMemoryCheck, HostRssAboveTheHostPlanWarns) {
  const Expectations expected = host_only_plan();
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  auto f = check_device_memory(snapshot_with_rss(1150ull << 20), nvml, expected);
  ASSERT_EQ(f.size(), 1u);  // nothing planned on the GPU: no device finding
  EXPECT_EQ(f[0].id, "host-plan-vs-measured");
  EXPECT_EQ(f[0].severity, Severity::ok) << f[0].evidence;
  f = check_device_memory(snapshot_with_rss(1200ull << 20), nvml, expected);
  EXPECT_EQ(f[0].severity, Severity::warn);
  EXPECT_NE(f[0].evidence.find("+20.0% of the load figure"), std::string::npos) << f[0].evidence;
  EXPECT_TRUE(with_id(f, "device-plan-vs-measured").empty());
}

// Both sides: a host part far above the process is a warning too (a safe plan, but a wrong
// one), unless the difference is mapped weights not read yet.
TEST(DeviceMemoryCheck, HostRssFarBelowTheHostPlanWarns) {
  Expectations expected = host_only_plan();
  gpu::NvmlReport nvml;
  nvml.loaded = true;
  auto f = check_device_memory(snapshot_with_rss(900ull << 20), nvml, expected);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::warn) << f[0].evidence;
  EXPECT_EQ(f[0].summary, "the host part of the plan is far above the process");
  EXPECT_NE(f[0].evidence.find("-10.0% of the load figure"), std::string::npos) << f[0].evidence;
  // 600 MiB of the host part are mapped weights and only 450 MiB of file pages are resident.
  expected.host_weights_bytes = 600ull << 20;
  f = check_device_memory(snapshot_with_rss(900ull << 20), nvml, expected);
  EXPECT_EQ(f[0].severity, Severity::ok) << f[0].evidence;
  EXPECT_NE(f[0].evidence.find("not resident yet"), std::string::npos) << f[0].evidence;
}

}  // namespace
}  // namespace gb10tune::verify
