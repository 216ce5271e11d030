#include "gb10tune/probe/probe.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "support/test_context.hpp"

namespace gb10tune::probe {
namespace {

ProbeResult probe_fixture(const std::string& scenario, const platform::Environment& env = {}) {
  const platform::Sysroot root(testing::sysroot_fixture(scenario));
  testing::FakeGpuBackend gpu = testing::fake_gpu_for(scenario);
  ProbeInputs inputs;
  inputs.sysroot = &root;
  inputs.env = &env;
  inputs.gpu = &gpu;
  inputs.find_llama_servers = false;
  inputs.now_iso8601 = "2026-11-29T12:00:00Z";
  return run_probe(inputs);
}

const Advice* find(const ProbeResult& result, const std::string& id) {
  for (const Advice& advice : result.advice) {
    if (advice.id == id) {
      return &advice;
    }
  }
  return nullptr;
}

TEST(Probe, Gb10MachineGetsGb10Advice) {
  const ProbeResult r = probe_fixture("gb10");
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.is_gb10());
  EXPECT_EQ(r.machine_class(), "GB10 (integrated, unified memory)");
  EXPECT_EQ(r.os.arch, "aarch64");

  const Advice* build = find(r, "build-line");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->fact, "K11");
  EXPECT_NE(build->command.find("-DCMAKE_CUDA_ARCHITECTURES=121a-real"), std::string::npos);
  EXPECT_NE(build->command.find("-DGGML_CPU_ARM_ARCH=armv9.2-a+dotprod+i8mm+bf16+sve2"),
            std::string::npos);
  const Advice* native = find(r, "ggml-native");
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->severity, Severity::warn);
  const Advice* smi = find(r, "nvidia-smi-memory");
  ASSERT_NE(smi, nullptr);
  EXPECT_EQ(smi->fact, "K3");
  EXPECT_EQ(smi->severity, Severity::warn);
  ASSERT_NE(find(r, "mmap-loading"), nullptr);
  ASSERT_TRUE(r.budget);
  EXPECT_EQ(r.budget->bytes, 109876544ull * 1024);
  EXPECT_EQ(r.budget->source, "MemAvailable");
}

TEST(Probe, UnifiedMemoryVariableIsFlaggedWhateverItsValue) {
  platform::Environment env;
  env.set("GGML_CUDA_ENABLE_UNIFIED_MEMORY", "0");
  const ProbeResult r = probe_fixture("gb10", env);
  const Advice* um = find(r, "unified-memory-env");
  ASSERT_NE(um, nullptr);
  EXPECT_EQ(um->fact, "K2");
  EXPECT_EQ(um->severity, Severity::warn);
  EXPECT_NE(um->title.find("=0"), std::string::npos);
  EXPECT_EQ(um->command, "unset GGML_CUDA_ENABLE_UNIFIED_MEMORY");

  const ProbeResult clean = probe_fixture("gb10");
  EXPECT_EQ(find(clean, "unified-memory-env")->severity, Severity::ok);
}

void expect_no_gb10_claims(const ProbeResult& r) {
  EXPECT_FALSE(r.is_gb10());
  EXPECT_EQ(find(r, "mmap-loading"), nullptr);
  EXPECT_NE(find(r, "nvidia-smi-memory")->severity, Severity::warn);
  for (const Advice& advice : r.advice) {
    EXPECT_EQ(advice.command.find("121a"), std::string::npos) << advice.id;
    EXPECT_EQ(advice.title.find("for GB10"), std::string::npos) << advice.id;
  }
}

TEST(Probe, DiscreteX86GetsItsOwnAdvice) {
  const ProbeResult r = probe_fixture("x86-discrete");
  expect_no_gb10_claims(r);
  EXPECT_EQ(r.machine_class(), "discrete GPU");
  EXPECT_EQ(find(r, "ggml-native"), nullptr);  // x86 native builds are fine
  EXPECT_NE(find(r, "build-line")->command.find("89-real"), std::string::npos);
  // Its NVML reports no memory figure: a budget per device, that GPU's unknown (a warning).
  const Advice* budget = find(r, "memory-budget");
  EXPECT_NE(budget->title.find("one per GPU"), std::string::npos) << budget->title;
  EXPECT_EQ(budget->severity, Severity::warn);
  EXPECT_NE(budget->detail.find("CUDA0: free memory unknown"), std::string::npos) << budget->detail;
  EXPECT_TRUE(r.plan_budgets.per_device);
  EXPECT_FALSE(r.plan_budgets.gpus.at(0).free_bytes);
}

TEST(Probe, NoGpuMachineGetsCpuOnlyAdvice) {
  const ProbeResult r = probe_fixture("no-gpu");
  expect_no_gb10_claims(r);
  EXPECT_EQ(r.machine_class(), "no GPU");
  EXPECT_EQ(r.os.arch, "x86_64");  // inferred from the CPU: the capture has no arch file
  EXPECT_EQ(find(r, "build-line")->command.find("GGML_CUDA"), std::string::npos);
  EXPECT_EQ(find(r, "nvidia-smi-memory")->severity, Severity::not_applicable);
}

TEST(Probe, ArmWithoutSve2AndACgroupLimit) {
  const ProbeResult r = probe_fixture("arm-nosve2");
  expect_no_gb10_claims(r);
  EXPECT_NE(find(r, "build-line")->command.find("armv8.4-a+dotprod+i8mm+bf16+sve "),
            std::string::npos);
  ASSERT_TRUE(r.budget);
  EXPECT_EQ(r.budget->source, "cgroup memory.max");
  EXPECT_EQ(r.budget->bytes, 17179869184ull - 1073741824ull);
  EXPECT_EQ(find(r, "memory-budget")->severity, Severity::warn);
}

TEST(Probe, MalformedProcFilesAreCollectedNotThrown) {
  const ProbeResult r = probe_fixture("malformed");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].find("cpuinfo"), std::string::npos);
  EXPECT_NE(r.errors[1].find("meminfo"), std::string::npos);
  EXPECT_FALSE(r.build);
  EXPECT_FALSE(r.budget);
  EXPECT_NE(find(r, "unified-memory-env"), nullptr);  // what can be said is still said
}

}  // namespace
}  // namespace gb10tune::probe
