#include "gb10tune/bench/roofline.hpp"

#include <gtest/gtest.h>

namespace gb10tune::bench {
namespace {

using nlohmann::json;

RooflineInputs k12_inputs() {
  RooflineInputs inputs;
  inputs.bytes_per_token = 16'800'000'000;  // Qwen3.8-27B Q4_K_M weights (K9, K12)
  inputs.bytes_source = "launch record";
  inputs.bandwidth_bytes_per_second = 237e9;  // cudaMalloc read on GB10 (K1)
  inputs.bandwidth_source = "--bandwidth";
  return inputs;
}

TEST(Roofline, DenseModelWithoutSpeculationMatchesK12) {
  const Roofline roof = compute_roofline(k12_inputs(), 12.7, std::nullopt);
  ASSERT_TRUE(roof.available);
  EXPECT_NEAR(roof.step_seconds * 1e3, 70.886, 1e-3);  // ~71 ms per weight read
  EXPECT_NEAR(roof.ceiling_tps, 14.107, 1e-3);         // ~14 t/s
  EXPECT_DOUBLE_EQ(roof.mean_accepted_length, 1.0);
  EXPECT_NEAR(roof.percent_of_ceiling, 12.7 / (237e9 / 16.8e9) * 100, 1e-9);  // ~90%
}

TEST(Roofline, SpeculationMultipliesTheCeilingByTheMeanLength) {
  const Roofline roof = compute_roofline(k12_inputs(), 23.7, 3.70);
  ASSERT_TRUE(roof.available);
  EXPECT_NEAR(roof.ceiling_tps, 3.70 * 237e9 / 16.8e9, 1e-9);
  EXPECT_NEAR(roof.percent_of_ceiling, 23.7 / (3.70 * 237e9 / 16.8e9) * 100, 1e-9);
}

TEST(Roofline, MoeReadsOnlyTheActiveBytes) {
  RooflineInputs inputs = k12_inputs();
  inputs.bytes_per_token = 3'500'000'000;  // ~3.5 GB read per token (K12's MoE example)
  const Roofline roof = compute_roofline(inputs, 56, std::nullopt);
  EXPECT_NEAR(roof.ceiling_tps, 237.0 / 3.5, 1e-9);
}

TEST(Roofline, MissingInputsSayWhichAndHow) {
  RooflineInputs no_bytes = k12_inputs();
  no_bytes.bytes_per_token = 0;
  const Roofline a = compute_roofline(no_bytes, 20, std::nullopt);
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.missing.find("--model"), std::string::npos);
  RooflineInputs no_bandwidth = k12_inputs();
  no_bandwidth.bandwidth_bytes_per_second = 0;
  const Roofline b = compute_roofline(no_bandwidth, 20, std::nullopt);
  EXPECT_FALSE(b.available);
  EXPECT_NE(b.missing.find("--bandwidth"), std::string::npos);
  EXPECT_DOUBLE_EQ(b.ceiling_tps, 0);
}

json bench_doc(const std::string& status, double median) {
  return {{"cases",
           {{{"allocator", "managed"},
             {"operation", "read"},
             {"status", "ok"},
             {"gbps", {{"median", 162.0}}}},
            {{"allocator", "device"},
             {"operation", "read"},
             {"status", status},
             {"gbps", {{"median", median}}}}}}};
}

TEST(Roofline, DeviceReadBandwidthFromSavedDocuments) {
  EXPECT_DOUBLE_EQ(*device_read_bandwidth(bench_doc("ok", 236.5)), 236.5e9);
  const json probe = {{"bandwidth", {{"ran", true}, {"result", bench_doc("ok", 230.0)}}}};
  EXPECT_DOUBLE_EQ(*device_read_bandwidth(probe), 230e9);
  EXPECT_FALSE(device_read_bandwidth(bench_doc("failed", 236.5)));
  EXPECT_FALSE(device_read_bandwidth(bench_doc("ok", 0)));
  EXPECT_FALSE(device_read_bandwidth(json{{"bandwidth", {{"ran", false}}}}));
  EXPECT_FALSE(device_read_bandwidth(json::array()));
  EXPECT_FALSE(device_read_bandwidth(json{{"cases", {{{"allocator", "device"}}}}}));
}

}  // namespace
}  // namespace gb10tune::bench
