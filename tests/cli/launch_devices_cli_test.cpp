// launch on machines with discrete GPUs: device buffers against each GPU's free memory, host
// buffers against MemAvailable; GB10 keeps one pool.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using nlohmann::json;

testing::CliResult launch_on(const std::string& scenario, std::vector<std::string> args) {
  args.insert(args.begin(), {"launch", "--llama-server", testing::stand_in_server_path().string(),
                             "--dry-run", "--backend", "cuda", "--slots", "1", "--ctx-per-slot",
                             "8192", "--cache-ram", "0", "--no-mtp"});
  return testing::run_cli_on(scenario, args, {});
}

std::size_t find(const std::string& text, const std::string& what) {
  return text.find(what);
}

// 40 blocks: ~36 GB of weights on a 24 GB GPU in a 128 GB host. The host alone could hold it
// all (one pool would say "fits"); the GPU cannot.
TEST(CliLaunchDevices, A24GbGpuRefusesWhatOnlyTheHostCouldHoldAndSaysHowManyLayersFit) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  const auto refused = launch_on("dgpu-24g", {"--model", model, "--no-fit"});
  ASSERT_EQ(refused.exit_code, 3) << refused.err << refused.out;
  EXPECT_NE(find(refused.err, "CUDA0 (NVIDIA GeForce RTX 4090) needs"), std::string::npos)
      << refused.err;
  EXPECT_NE(find(refused.out, "per device"), std::string::npos) << refused.out;
  EXPECT_NE(find(refused.out, "layers 0-39 + output"), std::string::npos) << refused.out;

  const auto doc_run = launch_on("dgpu-24g", {"--model", model, "--no-fit", "--json"});
  ASSERT_EQ(doc_run.exit_code, 3);
  const json devices = json::parse(doc_run.out)["plan"]["devices"];
  ASSERT_TRUE(devices.is_object()) << doc_run.out;
  EXPECT_EQ(devices["fits"], false);
  EXPECT_EQ(devices["tightest"], "CUDA0");
  EXPECT_EQ(devices["host"]["fits"], true);  // 125 GB of MemAvailable would take it all
  EXPECT_EQ(devices["gpus"][0]["fits"], false);
  EXPECT_EQ(devices["gpus"][0]["free_bytes"], 24'900'000'000ull);
  EXPECT_EQ(devices["gpus"][0]["available_bytes"], 24'900'000'000ull - (1ull << 30));
  const auto n = devices["max_gpu_layers_that_fit"].get<std::uint32_t>();
  EXPECT_GT(n, 10u);
  EXPECT_LT(n, 41u);
  EXPECT_NE(find(refused.err, "-ngl " + std::to_string(n)), std::string::npos) << refused.err;

  // The layers it names fit; one more does not. The CPU keeps the first blocks.
  const auto at_n = launch_on(
      "dgpu-24g", {"--model", model, "--no-fit", "--json", "--gpu-layers", std::to_string(n)});
  ASSERT_EQ(at_n.exit_code, 0) << at_n.err;
  const json fitted = json::parse(at_n.out)["plan"]["devices"];
  EXPECT_EQ(fitted["fits"], true);
  EXPECT_EQ(fitted["gpus"][0]["output_layer"], true);
  EXPECT_EQ(fitted["gpus"][0]["layers"].size(), n - 1);
  EXPECT_EQ(fitted["host"]["layers"].size(), 41 - n);
  EXPECT_EQ(fitted["host"]["layers"][0], 0);
  const auto one_more =
      launch_on("dgpu-24g", {"--model", model, "--no-fit", "--gpu-layers", std::to_string(n + 1)});
  EXPECT_EQ(one_more.exit_code, 3) << one_more.out;
}

// The default fit lowers the context, but no context makes 36 GB of weights fit 24 GB.
TEST(CliLaunchDevices, TheFitCannotMakeWeightsFitAGpuThatIsTooSmall) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  const auto result = launch_on("dgpu-24g", {"--model", model});
  EXPECT_EQ(result.exit_code, 3) << result.err << result.out;
  EXPECT_NE(find(result.err, "CUDA0"), std::string::npos) << result.err;
}

// Two 24 GB GPUs, --tensor-split 3,1: llama.cpp gives CUDA0 the layers whose position
// (il / 41) is below 0.75 (blocks 0-30), CUDA1 the rest and the output layer. CUDA0 cannot
// hold 31 blocks; an even split fits both.
TEST(CliLaunchDevices, TwoGpusSplitByTensorSplitArePlannedPerDevice) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 40);
  const auto uneven =
      launch_on("dgpu-2x", {"--model", model, "--no-fit", "--json", "--", "-ts", "3,1"});
  ASSERT_EQ(uneven.exit_code, 3) << uneven.err << uneven.out;
  const json d = json::parse(uneven.out)["plan"]["devices"];
  ASSERT_EQ(d["gpus"].size(), 2u) << uneven.out;
  EXPECT_EQ(d["gpus"][0]["name"], "CUDA0");
  EXPECT_EQ(d["gpus"][0]["layers"].size(), 31u);
  EXPECT_EQ(d["gpus"][0]["layers"].back(), 30);
  EXPECT_EQ(d["gpus"][0]["output_layer"], false);
  EXPECT_EQ(d["gpus"][1]["layers"].size(), 9u);
  EXPECT_EQ(d["gpus"][1]["layers"][0], 31);
  EXPECT_EQ(d["gpus"][1]["output_layer"], true);
  EXPECT_EQ(d["gpus"][0]["fits"], false);
  EXPECT_EQ(d["gpus"][1]["fits"], true);
  EXPECT_EQ(d["tightest"], "CUDA0");
  EXPECT_TRUE(d["host"]["layers"].empty());
  // Each GPU carries its own CUDA runtime and compute buffer; the KV of its blocks only.
  EXPECT_EQ(d["gpus"][0]["runtime_bytes"], d["gpus"][1]["runtime_bytes"]);
  EXPECT_EQ(d["gpus"][0]["cache_bytes"].get<std::uint64_t>() * 9,
            d["gpus"][1]["cache_bytes"].get<std::uint64_t>() * 31);
  EXPECT_NE(uneven.err.find("CUDA0 (NVIDIA GeForce RTX 4090) needs"), std::string::npos)
      << uneven.err;
  EXPECT_EQ(uneven.err.find("CUDA1 (NVIDIA"), std::string::npos) << uneven.err;

  const auto even =
      launch_on("dgpu-2x", {"--model", model, "--no-fit", "--json", "--", "-ts", "1,1"});
  ASSERT_EQ(even.exit_code, 0) << even.err << even.out;
  const json e = json::parse(even.out)["plan"]["devices"];
  EXPECT_EQ(e["fits"], true);
  EXPECT_EQ(e["gpus"][0]["layers"].size(), 21u);  // il / 41 < 0.5: blocks 0-20
  EXPECT_EQ(e["gpus"][1]["layers"].size(), 19u);

  // --device CUDA1 alone: one GPU, which cannot hold it all.
  const auto one =
      launch_on("dgpu-2x", {"--model", model, "--no-fit", "--json", "--", "-dev", "CUDA1"});
  ASSERT_EQ(one.exit_code, 3) << one.err;
  const json o = json::parse(one.out)["plan"]["devices"];
  ASSERT_EQ(o["gpus"].size(), 1u);
  EXPECT_EQ(o["gpus"][0]["name"], "CUDA1");
}

std::uint64_t u64(const json& value) {
  return value.get<std::uint64_t>();
}

// The projector goes where clip_ctx puts it (tools/mtmd/clip.cpp, 3f545be): the first GPU of
// ggml's registry (CUDA0) whatever --device says, -mmdev's device, or host memory with
// --no-mmproj-offload; its weights and compute buffer count in that part's budget.
TEST(CliLaunchDevices, TheProjectorIsCountedOnTheDeviceItGoesTo) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const std::string mmproj = testing::write_gemma3_projector(dir);
  const auto plan_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"--model", model, "--mmproj", mmproj, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto result = launch_on("dgpu-2x", args);
    EXPECT_EQ(result.exit_code, 0) << result.err << result.out;
    return result.exit_code == 0 ? json::parse(result.out)["plan"] : json::object();
  };
  const json both = plan_of({});
  ASSERT_TRUE(both["devices"].is_object()) << both.dump();
  // On a GPU: weights and graph there, the input image in host memory (clip's CPU buffer).
  const std::uint64_t image = u64(both["projector"]["host_compute_bytes"]);
  const std::uint64_t projector =
      u64(both["projector_bytes"]) + u64(both["projector_compute_bytes"]) - image;
  ASSERT_GT(u64(both["projector_compute_bytes"]), 0u);
  EXPECT_EQ(image, 3ull * 896 * 896 * 4);
  EXPECT_EQ(both["projector"]["buffer"], "CUDA0");
  EXPECT_EQ(both["devices"]["gpus"][0]["projector_bytes"], projector);
  EXPECT_EQ(both["devices"]["gpus"][1]["projector_bytes"], 0);
  EXPECT_EQ(both["devices"]["host"]["projector_bytes"], image);
  // --device CUDA1: the layers on CUDA1, the projector still on CUDA0, which then holds a
  // CUDA context and the projector only.
  const json dev1 = plan_of({"--", "-dev", "CUDA1"});
  ASSERT_EQ(dev1["devices"]["gpus"].size(), 2u) << dev1.dump();
  const json& layers_gpu = dev1["devices"]["gpus"][0];
  const json& projector_gpu = dev1["devices"]["gpus"][1];
  EXPECT_EQ(layers_gpu["name"], "CUDA1");
  EXPECT_EQ(layers_gpu["projector_bytes"], 0);
  EXPECT_EQ(projector_gpu["name"], "CUDA0");
  EXPECT_TRUE(projector_gpu["layers"].empty());
  EXPECT_EQ(projector_gpu["projector_bytes"], projector);
  EXPECT_GT(u64(projector_gpu["runtime_bytes"]), 0u);
  EXPECT_EQ(projector_gpu["free_bytes"], 24'900'000'000ull);
  EXPECT_EQ(projector_gpu["pci_bus_id"], "0000:01:00.0");
  EXPECT_EQ(u64(projector_gpu["total_bytes"]), projector + u64(projector_gpu["runtime_bytes"]));

  // -mmdev CUDA1: the projector on the second GPU.
  const json mmdev = plan_of({"--", "-mmdev", "CUDA1"});
  EXPECT_EQ(mmdev["projector"]["buffer"], "CUDA1");
  EXPECT_EQ(mmdev["devices"]["gpus"][0]["projector_bytes"], 0);
  EXPECT_EQ(mmdev["devices"]["gpus"][1]["projector_bytes"], projector);

  // --no-mmproj-offload: host memory, the image inside the one CPU buffer.
  const json host = plan_of({"--no-mmproj-offload"});
  EXPECT_EQ(host["projector"]["buffer"], "CPU");
  EXPECT_EQ(host["projector"]["host_compute_bytes"], 0);
  EXPECT_EQ(host["devices"]["gpus"][0]["projector_bytes"], 0);
  EXPECT_EQ(host["devices"]["host"]["projector_bytes"], projector);
  EXPECT_EQ(
      u64(host["devices"]["host"]["total_bytes"]) - u64(both["devices"]["host"]["total_bytes"]),
      projector - image);
}

// The projector counts in its GPU's budget: with 50 MB more than the layers need on the GPU,
// the plan fits without the projector (134 MB there) and is refused with it, naming CUDA0.
TEST(CliLaunchDevices, AProjectorThatDoesNotFitItsGpuRefusesNamingIt) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const std::string mmproj = testing::write_gemma3_projector(dir);
  // (--no-mmproj: launch picks up the one *mmproj*.gguf beside the model by itself)
  const auto alone = launch_on("dgpu-24g", {"--model", model, "--no-mmproj", "--json"});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const std::uint64_t layers =
      u64(json::parse(alone.out)["plan"]["devices"]["gpus"][0]["total_bytes"]);
  // One GPU: its part and the host's add up to the plan, the projector included.
  const auto whole = launch_on("dgpu-24g", {"--model", model, "--mmproj", mmproj, "--json"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const json p = json::parse(whole.out)["plan"];
  EXPECT_EQ(u64(p["devices"]["gpus"][0]["total_bytes"]) + u64(p["devices"]["host"]["total_bytes"]),
            u64(p["total_bytes"]));
  EXPECT_EQ(u64(p["devices"]["gpus"][0]["total_bytes"]) - layers,
            u64(p["projector_bytes"]) + u64(p["projector_compute_bytes"]) -
                u64(p["projector"]["host_compute_bytes"]));
  const std::string reserve = std::to_string(24'900'000'000ull - layers - 50'000'000ull);
  const auto without = launch_on(
      "dgpu-24g", {"--model", model, "--no-mmproj", "--gpu-reserve", reserve, "--no-fit"});
  EXPECT_EQ(without.exit_code, 0) << without.err;
  const auto with = launch_on(
      "dgpu-24g", {"--model", model, "--mmproj", mmproj, "--gpu-reserve", reserve, "--no-fit"});
  EXPECT_EQ(with.exit_code, 3) << with.err << with.out;
  EXPECT_NE(with.err.find("CUDA0 (NVIDIA GeForce RTX 4090) needs"), std::string::npos) << with.err;
  EXPECT_NE(with.out.find("+ mmproj"), std::string::npos) << with.out;
  EXPECT_NE(with.err.find("--no-mmproj-offload keeps it in host memory"), std::string::npos)
      << with.err;
  // In host memory it fits again.
  const auto on_host = launch_on("dgpu-24g", {"--model", model, "--mmproj", mmproj, "--gpu-reserve",
                                              reserve, "--no-fit", "--no-mmproj-offload"});
  EXPECT_EQ(on_host.exit_code, 0) << on_host.err;
}

// GB10 keeps one pool: no per-device plan, the budget is MemAvailable minus the reserve (K19).
TEST(CliLaunchDevices, Gb10StillPlansAgainstMemAvailable) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const auto result = launch_on("gb10", {"--model", model, "--json", "--reserve", "2GB"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json plan = json::parse(result.out)["plan"];
  EXPECT_TRUE(plan["devices"].is_null()) << plan.dump();
  const auto meminfo = testing::read_text(testing::sysroot_fixture("gb10") / "proc/meminfo");
  const auto at = meminfo.find("MemAvailable:");
  ASSERT_NE(at, std::string::npos);
  const std::uint64_t available_kib = std::stoull(meminfo.substr(at + 13));
  EXPECT_EQ(plan["available_bytes"], available_kib * 1024 - 2'000'000'000ull);
}

// The same 4-block model on the discrete GPU: device buffers go to CUDA0, the host keeps the
// token embedding and the pinned buffers; the host budget is MemAvailable minus the reserve.
TEST(CliLaunchDevices, DeviceAndHostPartsAddUpToThePlan) {
  testing::TempDir dir;
  const std::string model = testing::write_llama_70b_shape(dir, 4);
  const auto result = launch_on("dgpu-24g", {"--model", model, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json plan = json::parse(result.out)["plan"];
  const json& d = plan["devices"];
  ASSERT_TRUE(d.is_object());
  const json& gpu = d["gpus"][0];
  const json& host = d["host"];
  EXPECT_EQ(gpu["weights_bytes"].get<std::uint64_t>() + host["weights_bytes"].get<std::uint64_t>(),
            plan["weights_bytes"].get<std::uint64_t>())
      << d.dump();
  EXPECT_EQ(host["weights_bytes"], 8192ull * 32000 * 2);  // token_embd stays on the CPU
  EXPECT_EQ(gpu["cache_bytes"], plan["kv_full_bytes"]);
  EXPECT_EQ(gpu["total_bytes"].get<std::uint64_t>() + host["total_bytes"].get<std::uint64_t>(),
            plan["total_bytes"].get<std::uint64_t>());
  EXPECT_EQ(host["available_bytes"], plan["available_bytes"]);
  EXPECT_EQ(d["fits"], true);
}

}  // namespace
}  // namespace gb10tune
