// gb10tune plan for other machines: --machine gb10x2 (two GB10s over llama.cpp's RPC) plans
// what launch --rpc --dry-run plans against a worker that answers as a GB10 does, per node; a
// model too big for one GB10 fits the pair; the decode ceiling sums the two machines. A JSON
// description with a discrete GPU plans what launch plans on such a machine (the captured
// dgpu-24g: one 24 GB GPU), whole or split; its errors name the file and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gb10tune/launch/target_machine.hpp"
#include "support/fake_rpc_worker.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using json = nlohmann::json;

// A home of its own, and a 110-block llama of the 70B shape in f16 (111 GB of weights: more
// than one GB10's 112.5 GB MemAvailable less its 12 GB reserve; half of it on each of two, with
// the head's prompt cache, fits).
struct PairFixture {
  PairFixture() {
    env.set("HOME", home.path().string());
    env.set("PATH", "/usr/bin:/bin");
    model = testing::write_llama_70b_shape(dir, 110);
  }

  testing::CliResult plan(std::vector<std::string> args) const {
    args.insert(args.begin(), {"plan", model});
    return testing::run_cli_on("gb10", args, env);
  }

  // The document of a plan that exits `expected_exit`: 0, or 3 when launch's choice does not
  // fit (the document is printed either way); null on any other exit.
  json plan_json(std::vector<std::string> args, int expected_exit) const {
    args.push_back("--json");
    const auto result = plan(args);
    EXPECT_EQ(result.exit_code, expected_exit) << result.err << result.out;
    const bool planned = result.exit_code == 0 || result.exit_code == 3;
    return planned ? json::parse(result.out) : json();
  }

  testing::TempDir home;
  testing::TempDir dir;
  platform::Environment env;
  std::string model;
};

// A CUDA build of llama-server with the RPC backend, as launch tells one: the stand-in with the
// --help of such a build, behind a script beside libggml-cuda.
std::string cuda_rpc_build(const testing::TempDir& dir) {
  const std::filesystem::path bin = dir.path() / "cuda-rpc-build";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "libggml-cuda.so") << "";
  const auto path = bin / "llama-server";
  std::ofstream(path) << "#!/bin/sh\nSTANDIN_HELP='" << GB10TUNE_FIXTURES_DIR
                      << "/llama-server/help-2026-08-commit-3f545be-rpc.txt' exec '"
                      << testing::stand_in_server_path().string() << "' \"$@\"\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

// The captured GB10 with its driver's GPU entry (a GB10 with its driver lists it).
std::filesystem::path gb10_with_driver(const testing::TempDir& dir) {
  const std::filesystem::path root = dir.path() / "gb10-root";
  std::filesystem::copy(testing::sysroot_fixture("gb10"), root,
                        std::filesystem::copy_options::recursive);
  const std::filesystem::path gpu = root / "proc/driver/nvidia/gpus/0000:01:00.0";
  std::filesystem::create_directories(gpu);
  std::ofstream(gpu / "information") << "Model: \t\t NVIDIA GB10\nBus Location: \t 0000:01:00.0\n";
  return root;
}

// The nodes of an "rpc" document without their names (the worker's address differs).
json unnamed_nodes(const json& rpc) {
  json nodes = rpc.at("nodes");
  for (json& node : nodes) {
    node.erase("node");
  }
  return nodes;
}

const std::vector<std::string> kPairSettings{"--slots",     "1", "--ctx-per-slot", "8192",
                                             "--cache-ram", "0", "--no-mtp"};

TEST(CliPlanMachines, Gb10x2FitsWhatOneGb10CannotHold) {
  PairFixture f;
  const json one = f.plan_json({"--machine", "gb10"}, 3);
  const json two = f.plan_json({"--machine", "gb10x2"}, 3);
  ASSERT_FALSE(one.is_null());
  ASSERT_FALSE(two.is_null());
  const json& one_row = one["plan"]["what_fits"][0];
  const json& two_row = two["plan"]["what_fits"][0];
  EXPECT_EQ(one_row["ctx_per_slot_f16"], 0) << one_row;  // none fits one GB10
  EXPECT_EQ(one_row["ctx_per_slot_q8_0"], 0) << one_row;
  EXPECT_GT(two_row["ctx_per_slot_f16"].get<std::uint64_t>(), 8192u) << two.dump(1);
  EXPECT_GE(two_row["ctx_per_slot_q8_0"].get<std::uint64_t>(),
            two_row["ctx_per_slot_f16"].get<std::uint64_t>());
  const json& rpc = two["plan"]["launch"]["rpc"];
  ASSERT_TRUE(rpc.is_object()) << two["plan"]["launch"].dump(1);
  EXPECT_EQ(rpc["workers"][0]["endpoint"], "192.168.100.2:50052");
  EXPECT_EQ(rpc["nodes"].size(), 2u);
  EXPECT_TRUE(two["plan"]["llama_server"].get<std::string>().find("with the RPC backend") !=
              std::string::npos);
  EXPECT_TRUE(one["plan"]["launch"]["rpc"].is_null());
}

// Each cell of the pair's table is the largest context whose plan fits both nodes: 256 more
// tokens per slot do not fit one of them (the first row that memory, not the model's
// training context, bounds).
TEST(CliPlanMachines, Gb10x2CellsAreTheLargestContextThatFitsEveryNode) {
  PairFixture f;
  const json two = f.plan_json({"--machine", "gb10x2", "--max-slots", "8"}, 3);
  ASSERT_FALSE(two.is_null());
  const auto training = two["plan"]["training_context"].get<std::uint64_t>();
  std::uint64_t slots = 0;
  std::uint64_t ctx = 0;
  for (const json& row : two["plan"]["what_fits"]) {
    ctx = row["ctx_per_slot_f16"].get<std::uint64_t>();
    if (ctx < training) {
      slots = row["slots"].get<std::uint64_t>();
      break;
    }
  }
  ASSERT_GT(slots, 0u) << two["plan"]["what_fits"].dump();
  ASSERT_GT(ctx, 0u);
  const auto at = [&](std::uint64_t c, int expected_exit) {
    return f.plan_json({"--machine", "gb10x2", "--max-slots", "1", "--slots", std::to_string(slots),
                        "--ctx-per-slot", std::to_string(c), "--cache-type-k", "f16",
                        "--cache-type-v", "f16", "--no-fit"},
                       expected_exit)["plan"]["launch"];
  };
  const json fits = at(ctx, 0);
  EXPECT_TRUE(fits["fits"].get<bool>()) << fits["rpc"].dump(1);
  EXPECT_FALSE(at(ctx + 256, 3)["fits"].get<bool>());
}

// The per-node plan of --machine gb10x2 is launch --rpc --dry-run's on the GB10 capture with a
// worker that answers as a GB10 does (MemAvailable free of MemTotal) and the same build.
TEST(CliPlanMachines, Gb10x2PlansWhatLaunchRpcDryRunPlans) {
  PairFixture f;
  const auto gb10 = launch::gb10_machine();
  testing::WorkerConfig config;
  config.devices =
      std::vector<rpc::DeviceMemory>(1, rpc::DeviceMemory{gb10.available_bytes, gb10.memory_bytes});
  testing::FakeRpcWorker worker(config);
  const std::string server = cuda_rpc_build(f.dir);
  std::vector<std::string> planned_args{"--machine", "gb10x2", "--llama-server", server};
  planned_args.insert(planned_args.end(), kPairSettings.begin(), kPairSettings.end());
  const json planned = f.plan_json(planned_args, 0);
  std::vector<std::string> launch_args{
      "launch",  "--dry-run", "--json",
      "--model", f.model,     "--llama-server",
      server,    "--rpc",     "127.0.0.1:" + std::to_string(worker.port())};
  launch_args.insert(launch_args.end(), kPairSettings.begin(), kPairSettings.end());
  const auto dry = testing::run_cli_at(gb10_with_driver(f.dir), "gb10", launch_args, f.env);
  ASSERT_EQ(dry.exit_code, 0) << dry.err << dry.out;
  ASSERT_FALSE(planned.is_null());
  const json launched = json::parse(dry.out);
  const json& choice = planned["plan"]["launch"];
  ASSERT_TRUE(choice["rpc"].is_object());
  EXPECT_EQ(launched["config"]["backend"], "cuda");
  EXPECT_EQ(unnamed_nodes(choice["rpc"]).dump(1), unnamed_nodes(launched["rpc"]).dump(1));
  EXPECT_EQ(choice["rpc"]["fits"], launched["rpc"]["fits"]);
  EXPECT_EQ(choice["rpc"]["fits"], true);
  EXPECT_EQ(choice["memory"].dump(1), launched["plan"].dump(1));
  EXPECT_EQ(choice["fits"], true);
}

// Layers run one machine after the other: the step is the sum of both machines' reads, each
// node's share of the bytes in proportion to its blocks, and RPC's own cost is said to be left
// out. With two equal machines the ceiling is one GB10's.
//
// The figures, worked out by hand from the model's header (write_llama_70b_shape): a block
// reads 1,006,698,496 bytes (f16 attn_q and attn_output 8192 x 8192, attn_k and attn_v 8192 x
// 1024, ffn_gate, ffn_up and ffn_down 8192 x 14336, two f32 norms of 8192); the output layer
// 524,320,768 (f16 8192 x 32000 and its f32 norm); token_embd is a row lookup, not read whole.
// 110 blocks and the output: 111,261,155,328 bytes a token. A GB10 reads 237 GB/s on the
// device path (K1): 237e9 / 111,261,155,328 = 2.1301234856 tokens/s, one machine or two.
TEST(CliPlanMachines, Gb10x2CeilingSumsTheMachinesAndSaysWhatIsLeftOut) {
  constexpr std::uint64_t kBlockBytes = 1'006'698'496;
  constexpr std::uint64_t kBytesPerToken = 111'261'155'328;
  constexpr double kTps = 2.1301234856;
  PairFixture f;
  const json one = f.plan_json({"--machine", "gb10"}, 3);
  const json two = f.plan_json({"--machine", "gb10x2"}, 3);
  ASSERT_FALSE(two.is_null());
  const json& c = two["plan"]["decode_ceiling"];
  ASSERT_EQ(c["nodes"].size(), 2u) << c.dump(1);
  EXPECT_EQ(c["bytes_per_token"], kBytesPerToken);
  // The RPC plan puts 50 blocks on the worker, the other 60 and the output layer on the head
  // (the split launch --rpc --dry-run makes: Gb10x2PlansWhatLaunchRpcDryRunPlans): 50 x
  // 1,006,698,496 = 50,334,924,800 bytes and 60 x 1,006,698,496 + 524,320,768 = 60,926,230,528.
  const json& nodes = two["plan"]["launch"]["rpc"]["nodes"];
  EXPECT_EQ(nodes[0]["layers"].size(), 50u) << nodes.dump(1);
  EXPECT_EQ(c["nodes"][0]["bytes"], 50 * kBlockBytes) << c.dump(1);
  EXPECT_EQ(c["nodes"][1]["bytes"], 60 * kBlockBytes + 524'320'768) << c.dump(1);
  EXPECT_NEAR(c["nodes"][0]["seconds"].get<double>(), 50 * kBlockBytes / 237e9, 1e-12);
  EXPECT_NEAR(c["tps"].get<double>(), kTps, 1e-9);
  EXPECT_NEAR(one["plan"]["decode_ceiling"]["tps"].get<double>(), kTps, 1e-9);
  EXPECT_TRUE(one["plan"]["decode_ceiling"]["nodes"].empty());
  EXPECT_NE(c["left_out"].get<std::string>().find("no measured figure"), std::string::npos);
  const auto text = f.plan({"--machine", "gb10x2"});
  // Exit 3: launch's choice for this model is the GB10 profile's 3 slots, their pool capped at
  // 3 x the training context of 32,768 = 98,304 cells: 98,304 x 450,560 bytes of KV (110 layers
  // x 8 KV heads x 128 x K and V x 2 bytes) = 41.25 GiB, beside 103.6 GiB of weights and the
  // 24 GiB prompt cache; the head's share does not fit.
  EXPECT_EQ(text.exit_code, 3) << text.err << text.out;
  EXPECT_NE(text.out.find("-c 98304 -np 3"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("173.9 GiB of 197.4 GiB available (does not fit)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("one machine after the other: 192.168.100.2:50052"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("per node (RPC)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(gb10x2, 104.8 GiB available on each)"), std::string::npos) << text.out;
}

// dgpu-24g as a description: its MemTotal and MemAvailable, one RTX 4090 with the 24.9 GB that
// NVML reports free on it, a CUDA build.
std::string dgpu_description(const testing::TempDir& dir) {
  return dir
      .write("dgpu-24g.json",
             R"({"name": "x86 box with a 24 GB GPU", "memory_gb": 135.0565888,
                 "available_gb": 128.0, "backend": "cuda",
                 "gpus": [{"name": "NVIDIA GeForce RTX 4090", "memory_gb": 24.9,
                           "bandwidth_gbps": 1008}]})")
      .string();
}

// The plan of `model` on the described dgpu-24g and launch --dry-run's on the capture, with
// the same CUDA build and `settings`: {plan's launch choice, launch's document}.
std::pair<json, json> described_and_launched(const PairFixture& f, const std::string& model,
                                             const std::vector<std::string>& settings) {
  const std::string server = cuda_rpc_build(f.dir);
  std::vector<std::string> plan_args{"plan",           model,  "--machine", dgpu_description(f.dir),
                                     "--llama-server", server, "--json"};
  std::vector<std::string> launch_args{"launch", "--dry-run",      "--json", "--model",
                                       model,    "--llama-server", server};
  plan_args.insert(plan_args.end(), settings.begin(), settings.end());
  launch_args.insert(launch_args.end(), settings.begin(), settings.end());
  const auto planned = testing::run_cli_on("gb10", plan_args, f.env);
  const auto launched = testing::run_cli_on("dgpu-24g", launch_args, f.env);
  EXPECT_EQ(planned.exit_code, launched.exit_code) << planned.err << launched.err;
  if (planned.out.empty() || launched.out.empty()) {
    ADD_FAILURE() << planned.err << launched.err;
    return {};
  }
  json choice = json::parse(planned.out)["plan"]["launch"];
  json launch = json::parse(launched.out);
  // A description names no CPU features: the capture's are the only difference, and with a
  // CUDA build and a GPU in use they repack nothing (repack_bytes is compared).
  for (json* repack : {&choice["memory"]["repack"], &launch["plan"]["repack"]}) {
    EXPECT_EQ((*repack)["buffer_bytes"], 0) << repack->dump();
    repack->erase("evidence");
    repack->erase("features");
  }
  return {choice, launch};
}

const std::vector<std::string> kDescribedSettings{"--slots",     "1", "--ctx-per-slot", "8192",
                                                  "--cache-ram", "0", "--no-mtp",       "--no-fit"};

// 10 blocks (about 10 GB) fit the 24 GB GPU whole: every layer and the output on CUDA0.
TEST(CliPlanMachines, ADescribedDiscreteGpuHoldsAModelThatFitsWhole) {
  PairFixture f;
  const std::string model = testing::write_llama_70b_shape(f.dir, 10);
  const auto [choice, launched] = described_and_launched(f, model, kDescribedSettings);
  ASSERT_TRUE(choice.is_object());
  const json& gpu = choice["memory"]["devices"]["gpus"][0];
  EXPECT_EQ(gpu["name"], "CUDA0") << choice["memory"]["devices"].dump(1);
  EXPECT_EQ(gpu["output_layer"], true);
  EXPECT_EQ(choice["fits"], true);
  EXPECT_EQ(choice["memory"].dump(1), launched["plan"].dump(1));
}

// 40 blocks (about 36 GB) with -ngl 20: the GPU takes the last 19 blocks and the output layer,
// the host the first 21, as launch places them on such a device.
TEST(CliPlanMachines, ADescribedDiscreteGpuSplitsAModelAsLaunchWould) {
  PairFixture f;
  const std::string model = testing::write_llama_70b_shape(f.dir, 40);
  std::vector<std::string> settings = kDescribedSettings;
  settings.insert(settings.end(), {"--gpu-layers", "20"});
  const auto [choice, launched] = described_and_launched(f, model, settings);
  ASSERT_TRUE(choice.is_object());
  const json& devices = choice["memory"]["devices"];
  EXPECT_EQ(devices["gpus"][0]["output_layer"], true) << devices.dump(1);
  EXPECT_EQ(devices["gpus"][0]["layers"].front(), 21);
  EXPECT_EQ(devices["host"]["layers"].size(), 21u);
  EXPECT_GT(devices["host"]["weights_bytes"].get<std::uint64_t>(), 0u) << devices.dump(1);
  EXPECT_EQ(choice["memory"].dump(1), launched["plan"].dump(1));
  // Without -ngl the whole model is asked of the GPU, which cannot hold it: none fits.
  const auto table = testing::run_cli_on(
      "gb10", {"plan", model, "--machine", dgpu_description(f.dir), "--json"}, f.env);
  ASSERT_FALSE(table.out.empty()) << table.err;
  EXPECT_EQ(json::parse(table.out)["plan"]["what_fits"][0]["ctx_per_slot_f16"], 0) << table.out;
}

// Every bad description is a usage error naming the file and the key.
TEST(CliPlanMachines, BadGpuDescriptionsNameTheFileAndTheKey) {
  PairFixture f;
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"("gpus": [{"name": "A", "memory_gb": 24, "vram": 1}])", "gpus[0]: unknown field 'vram'"},
      {R"("gpus": [{"name": "A", "memory_gb": "24"}])",
       "gpus[0]: field 'memory_gb' has the wrong type"},
      {R"("gpus": [{"name": "A", "memory_gb": -1}])",
       "gpus[0]: 'memory_gb' must be a number above 0"},
      {R"("gpus": [{"name": "A", "memory_gb": 0}])", "gpus[0]: 'memory_gb' must be a number above"},
      {R"("gpus": [{"memory_gb": 24}])", "gpus[0]: field 'name' is missing"},
      {R"("gpus": [{"name": "A"}])", "gpus[0]: field 'memory_gb' is missing"},
      {R"("gpus": [{"name": "A", "memory_gb": 24, "bandwidth_gbps": 0}])",
       "gpus[0]: 'bandwidth_gbps' must be a number above 0"},
      {R"("gpus": [{"name": "A", "memory_gb": 24, "integrated": "no"}])",
       "gpus[0]: field 'integrated' has the wrong type"},
      {R"("gpus": [{"name": "A", "integrated": true, "memory_gb": 24}])",
       "gpus[0]: an integrated GPU has no memory of its own"},
      {R"("gpus": [{"name": "A", "integrated": true}, {"name": "B", "memory_gb": 8}])",
       "an integrated GPU must be the only one"},
      {R"("gpus": [])", "'gpus' must be a list"},
      {R"("gpus": [{"name": "A", "memory_gb": 24}], "gpu": "B")", "give 'gpu'"},
      {R"("gpus": {"name": "A"})", "'gpus' must be a list"},
  };
  for (const auto& [gpus, message] : cases) {
    const auto file = f.dir.write("bad.json", R"({"memory_gb": 64, )" + gpus + "}");
    const auto r = f.plan({"--machine", file.string()});
    EXPECT_EQ(r.exit_code, 2) << gpus << r.err;
    EXPECT_NE(r.err.find("machine description " + file.string() + ": " + message),
              std::string::npos)
        << gpus << "\n"
        << r.err;
  }
}

}  // namespace
}  // namespace gb10tune
