#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "gb10tune/kernels/bandwidth.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "support/fake_bandwidth.hpp"
#include "support/test_context.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;
using testing::run_cli_on;

bench::CaseRunner runner_for(testing::FakeBandwidth& fake) {
  return [&fake](const kernels::CaseSpec& spec) { return fake(spec); };
}

TEST(CliBench, Gb10TextShowsEveryCaseAndTheVerdict) {
  testing::FakeBandwidth fake;
  const auto result = run_cli_on("gb10", {"bench"}, {}, runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("gb10tune bench — NVIDIA GB10 (GB10 (integrated, unified memory))"),
            std::string::npos);
  EXPECT_NE(result.out.find("device read"), std::string::npos);
  EXPECT_NE(result.out.find("pageable_mmap copy"), std::string::npos);
  EXPECT_NE(result.out.find("verdict: device path is 46% faster than managed"), std::string::npos)
      << result.out;
  // Progress: one line per case on stderr.
  EXPECT_NE(result.err.find("[ 1/22] device read: 237.0 GB/s"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("[22/22]"), std::string::npos);
}

TEST(CliBench, Gb10TextMatchesGolden) {
  testing::FakeBandwidth fake;
  fake.gbps[kernels::Allocator::pinned_host] = 0.5;  // a path far slower than the others
  const auto result =
      run_cli_on("gb10", {"bench", "--sweep", "--size", "8M"}, {}, runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  testing::expect_golden("bench-gb10.txt", result.out);
}

TEST(CliBench, JsonHasEverySampleAndTheConvention) {
  testing::FakeBandwidth fake;
  const auto result =
      run_cli_on("gb10", {"bench", "--json", "--samples", "12"}, {}, runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["command"], "bench");
  EXPECT_EQ(doc["cases"].size(), 22u);
  EXPECT_EQ(doc["cases"][0]["sample_seconds"].size(), 12u);
  EXPECT_EQ(doc["cases"][0]["sample_gbps"].size(), 12u);
  EXPECT_TRUE(doc["cases"][0]["buffer_bytes"].is_number_unsigned());
  EXPECT_NE(doc["byte_convention"].get<std::string>().find("10^9"), std::string::npos);
  EXPECT_EQ(doc["peak_bytes_per_second"], 273e9);
  EXPECT_EQ(doc["all_valid"], true);
  EXPECT_EQ(doc["contended"], false);
}

TEST(CliBench, NoGpuExitsFourWithOneLine) {
  const auto result = run_cli_on("no-gpu", {"bench"}, {});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find("gb10tune bench: no GPU"), std::string::npos);
}

TEST(CliBench, BadOptionsAreUsageErrors) {
  testing::FakeBandwidth fake;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "--size", "lots"},
        std::vector<std::string>{"bench", "--size", "0"},
        std::vector<std::string>{"bench", "--reserve", "much"},
        std::vector<std::string>{"bench", "--allocators", "device,bogus"},
        std::vector<std::string>{"bench", "--operations", "scan"},
        std::vector<std::string>{"bench", "--device", "3"},
        std::vector<std::string>{"bench", "--samples", "0"},
        std::vector<std::string>{"bench", "--peak", "-5"}}) {
    const auto result = run_cli_on("gb10", args, {}, runner_for(fake));
    EXPECT_EQ(result.exit_code, 2) << args[1] << ": " << result.err;
    EXPECT_FALSE(result.err.empty());
  }
  EXPECT_TRUE(fake.calls.empty());
}

TEST(CliBench, ValidationFailureExitsOne) {
  testing::FakeBandwidth fake;
  fake.fail_validation = true;
  const auto result = run_cli_on("gb10", {"bench", "--quick"}, {}, runner_for(fake));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("failed: validation failed"), std::string::npos) << result.out;
}

TEST(CliBench, FiltersAndSizeReachTheKernels) {
  testing::FakeBandwidth fake;
  const auto result = run_cli_on(
      "gb10", {"bench", "--allocators", "managed", "--operations", "read", "--size", "512M"}, {},
      runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(fake.calls.size(), 1u);
  EXPECT_EQ(fake.calls[0].allocator, kernels::Allocator::managed);
  EXPECT_EQ(fake.calls[0].bytes, 512u << 20);
}

// Right after `stop`, the stopped server may linger as a zombie its parent has not reaped: it
// holds no memory, so the figures are not contended.
TEST(CliBench, ZombieLlamaServerIsNotContention) {
  testing::FakeBandwidth fake;
  const auto result =
      run_cli_on("verify-zombie", {"bench", "--quick", "--json"}, {}, runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["contended"], false) << doc["server_pids"];
  EXPECT_TRUE(doc["server_pids"].empty()) << doc["server_pids"];
  const auto text = run_cli_on("verify-zombie", {"bench", "--quick"}, {}, runner_for(fake));
  EXPECT_EQ(text.out.find("contended"), std::string::npos) << text.out;
}

// The same with a real zombie on this machine: a child named llama-server that has exited and
// that this process does not reap until the end.
TEST(CliBench, RealZombieLlamaServerIsNotContention) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_NAME, "llama-server");
    ::_exit(0);
  }
  const platform::Sysroot live;
  bool zombie = false;
  for (int i = 0; i < 500 && !zombie; ++i) {
    const auto stat = sys::read_process_stat(live, child);
    zombie = stat && stat->state == 'Z' && stat->comm == "llama-server";
    if (!zombie) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  testing::FakeBandwidth fake;
  const auto result =
      testing::run_cli_at("/", "gb10", {"bench", "--quick", "--json"}, {}, runner_for(fake));
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(zombie) << "the child " << child << " never became a zombie named llama-server";
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto pids = json::parse(result.out)["server_pids"].get<std::vector<int>>();
  EXPECT_EQ(std::find(pids.begin(), pids.end(), child), pids.end())
      << "zombie " << child << " counted as a running llama-server";
}

TEST(CliProbeQuickBench, FillsTheBandwidthSeam) {
  testing::FakeBandwidth fake;
  const auto result =
      run_cli_on("gb10", {"probe", "--json", "--no-save", "--quick-bench"}, {}, runner_for(fake));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["bandwidth"]["ran"], true);
  EXPECT_EQ(doc["bandwidth"]["result"]["cases"].size(), 5u);
  EXPECT_NE(doc["bandwidth"]["summary"].get<std::string>().find("cudaMalloc read 237.0 GB/s"),
            std::string::npos);
}

TEST(CliProbeQuickBench, NoGpuSaysWhyAndStillSucceeds) {
  const auto result = run_cli_on("no-gpu", {"probe", "--no-save", "--quick-bench"}, {});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("not run: gb10tune bench: no GPU"), std::string::npos) << result.out;
}

TEST(CliBenchBinary, ExitsFourWithoutAGpu) {
  if (kernels::device_count() > 0) {
    GTEST_SKIP() << "this machine has a GPU; the no-GPU answer is checked where there is none";
  }
  const auto result = testing::run_binary({"bench"});
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1) << result.out;
  EXPECT_NE(result.out.find("gb10tune bench: no GPU"), std::string::npos);
}

}  // namespace
}  // namespace gb10tune
