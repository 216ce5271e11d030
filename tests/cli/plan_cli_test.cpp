// gb10tune plan end to end: the same plan from a local file, a header-only copy and the file
// over HTTP; --machine gb10 against a launch dry run on the GB10 capture; the bounded remote
// reads' errors, with nothing written; launch's refusal of a header-only copy.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/range_peer.hpp"
#include "support/split_models.hpp"
#include "support/stand_in.hpp"
#include "support/test_context.hpp"
#include "support/test_models.hpp"

namespace gb10tune {
namespace {

using json = nlohmann::json;

// A home of its own for each run (nothing else may be written), the model files in `dir`.
struct PlanCliFixture {
  PlanCliFixture() {
    env.set("HOME", home.path().string());
    env.set("PATH", "/usr/bin:/bin");
    testing::large_report_model().write(dir.path() / "Qwen-27B-Q4_K_M.gguf");
    model = (dir.path() / "Qwen-27B-Q4_K_M.gguf").string();
  }

  testing::CliResult plan(std::vector<std::string> args) const {
    args.insert(args.begin(), "plan");
    return testing::run_cli_on("gb10", args, env);
  }

  json plan_json(std::vector<std::string> args) const {
    args.push_back("--json");
    const auto result = plan(args);
    EXPECT_EQ(result.exit_code, 0) << result.err << result.out;
    return result.exit_code == 0 ? json::parse(result.out) : json();
  }

  // Whether the home is still empty.
  bool home_untouched() const { return std::filesystem::is_empty(home.path()); }

  // The files written under the home, relative to it.
  std::vector<std::string> written() const {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(home.path())) {
      if (entry.is_regular_file()) {
        files.push_back(std::filesystem::relative(entry.path(), home.path()).string());
      }
    }
    return files;
  }

  testing::TempDir home;
  testing::TempDir dir;
  platform::Environment env;
  std::string model;
};

// The lines of the text report after its header (the table, the ceiling, the choice).
std::string plan_part(const std::string& text) {
  return text.substr(text.find("\n\n"));
}

TEST(CliPlan, TheSamePlanLocallyAndOverHttpReadingUnderOnePercent) {
  PlanCliFixture f;
  auto log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer peer(
      testing::ranged_files({{"/org/model/resolve/main/Qwen-27B-Q4_K_M.gguf", f.model}}, log));
  const std::string url = peer.url() + "/org/model/resolve/main/Qwen-27B-Q4_K_M.gguf";
  const json local = f.plan_json({f.model, "--machine", "gb10"});
  const json remote = f.plan_json({url, "--machine", "gb10"});
  ASSERT_FALSE(local.is_null());
  ASSERT_FALSE(remote.is_null());
  EXPECT_EQ(remote["plan"].dump(), local["plan"].dump());
  EXPECT_TRUE(remote["model"]["remote"].get<bool>());
  const auto size = remote["model"]["size"].get<std::uint64_t>();
  EXPECT_EQ(size, std::filesystem::file_size(f.model));
  EXPECT_LT(remote["model"]["bytes_read"].get<std::uint64_t>(), size / 100);
  EXPECT_LT(log->body_bytes.load(), size / 100);
  const auto local_text = f.plan({f.model, "--machine", "gb10"});
  const auto remote_text = f.plan({url, "--machine", "gb10"});
  EXPECT_EQ(plan_part(remote_text.out), plan_part(local_text.out));
  EXPECT_TRUE(testing::contains(remote_text.out, "headers only")) << remote_text.out;
  EXPECT_TRUE(testing::contains(local_text.out, "commit 3f545be (its flags assumed, no binary)"))
      << local_text.out;
  // Only the header cache was written.
  const auto written = f.written();
  ASSERT_EQ(written.size(), 1u);
  EXPECT_TRUE(written.front().starts_with(".cache/gb10tune/headers/")) << written.front();
}

TEST(CliPlan, TheHeaderCacheIsRevalidatedAndCanBeBypassed) {
  PlanCliFixture f;
  auto log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer peer(testing::ranged_files({{"/m/Qwen-27B-Q4_K_M.gguf", f.model}}, log));
  const std::string url = peer.url() + "/m/Qwen-27B-Q4_K_M.gguf";
  const json first = f.plan_json({url, "--machine", "gb10"});
  const json second = f.plan_json({url, "--machine", "gb10"});
  ASSERT_FALSE(second.is_null());
  EXPECT_FALSE(first["model"]["files"][0]["from_cache"].get<bool>());
  EXPECT_TRUE(second["model"]["files"][0]["from_cache"].get<bool>());
  EXPECT_EQ(second["model"]["bytes_read"], 1);  // the revalidation's one byte
  EXPECT_EQ(second["plan"].dump(), first["plan"].dump());
  const json bypass = f.plan_json({url, "--machine", "gb10", "--no-cache"});
  ASSERT_FALSE(bypass.is_null());
  EXPECT_FALSE(bypass["model"]["files"][0]["from_cache"].get<bool>());
  EXPECT_EQ(bypass["model"]["bytes_read"], first["model"]["bytes_read"]);
  // Another file at the same URL (another size): fetched again, not taken from the cache.
  testing::GgufWriter other = testing::large_report_model();
  other.add("general.license", testing::gguf_string("changed"));
  other.write(f.model);
  const json changed = f.plan_json({url, "--machine", "gb10"});
  ASSERT_FALSE(changed.is_null());
  EXPECT_FALSE(changed["model"]["files"][0]["from_cache"].get<bool>());
  EXPECT_EQ(changed["model"]["size"].get<std::uint64_t>(), std::filesystem::file_size(f.model));
}

TEST(CliPlan, AHeaderOnlyCopyPlansAsTheWholeFileAndLaunchRefusesIt) {
  PlanCliFixture f;
  const auto head = f.dir.path() / "head" / "Qwen-27B-Q4_K_M.gguf";
  std::filesystem::create_directories(head.parent_path());
  testing::large_report_model().write(head);
  std::filesystem::resize_file(head, testing::large_report_model().layout().data_offset);
  const json whole = f.plan_json({f.model, "--machine", "gb10"});
  const json copy = f.plan_json({head.string(), "--machine", "gb10"});
  ASSERT_FALSE(copy.is_null());
  EXPECT_EQ(copy["plan"].dump(), whole["plan"].dump());
  EXPECT_TRUE(copy["model"]["files"][0]["header_only"].get<bool>());
  const auto launch =
      testing::run_cli_on("gb10",
                          {"launch", "--dry-run", "--model", head.string(), "--llama-server",
                           testing::stand_in_server_path().string()},
                          f.env);
  EXPECT_EQ(launch.exit_code, 2) << launch.out << launch.err;
  EXPECT_TRUE(testing::contains(launch.err + launch.out, "truncated")) << launch.err;
}

// --machine gb10 plans what a launch dry run plans on the captured GB10 with its driver's GPU
// entry (a GB10 with its driver lists it; the capture came without), with the same CUDA build
// of llama-server: the CUDA backend with the integrated GPU's single pool, the same command line
// and every figure of the memory plan.
TEST(CliPlan, MachineGb10PlansWhatALaunchDryRunOnTheGb10CapturePlans) {
  PlanCliFixture f;
  const std::filesystem::path root = f.dir.path() / "gb10-root";
  std::filesystem::copy(testing::sysroot_fixture("gb10"), root,
                        std::filesystem::copy_options::recursive);
  const std::filesystem::path gpu = root / "proc/driver/nvidia/gpus/0000:01:00.0";
  std::filesystem::create_directories(gpu);
  std::ofstream(gpu / "information") << "Model: \t\t NVIDIA GB10\nBus Location: \t 0000:01:00.0\n";
  // A CUDA build, as launch tells one: libggml-cuda beside the binary.
  const std::filesystem::path bin = f.dir.path() / "cuda-build";
  std::filesystem::create_directories(bin);
  std::filesystem::copy_file(testing::stand_in_server_path(), bin / "llama-server");
  std::ofstream(bin / "libggml-cuda.so") << "";
  const std::string server = (bin / "llama-server").string();
  const json planned = f.plan_json({f.model, "--machine", "gb10", "--llama-server", server});
  const auto dry = testing::run_cli_at(
      root, "gb10", {"launch", "--dry-run", "--json", "--model", f.model, "--llama-server", server},
      f.env);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  const json launched = json::parse(dry.out);
  ASSERT_FALSE(planned.is_null());
  const json& choice = planned["plan"]["launch"];
  EXPECT_EQ(launched["config"]["backend"], "cuda") << launched["config"].dump(1);
  std::vector<std::string> argv = launched["command_line"]["argv"].get<std::vector<std::string>>();
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-m") {
      argv[i + 1] = "Qwen-27B-Q4_K_M.gguf";
    }
  }
  EXPECT_EQ(choice["argv"].get<std::vector<std::string>>(), argv);
  EXPECT_EQ(choice["memory"].dump(2), launched["plan"].dump(2));
  EXPECT_EQ(choice["total_bytes"], launched["plan"]["total_bytes"]);
  EXPECT_EQ(choice["available_bytes"], launched["plan"]["available_bytes"]);
  EXPECT_TRUE(f.home_untouched());
  // Without a binary, the assumed build is the machine's: CUDA on a GB10.
  const json assumed = f.plan_json({f.model, "--machine", "gb10"});
  const json& memory = assumed["plan"]["launch"]["memory"];
  EXPECT_GT(memory.value("runtime_device_bytes", std::uint64_t{0}), 0u) << memory.dump(1);
  EXPECT_GT(memory["buffers"]["main"].value("compute_device_bytes", std::uint64_t{0}), 0u);
}

// What a new user met: `plan http://…` of a file served by `python3 -m http.server` (no Range
// support) was refused even for a file of a few KB; it is read whole, and the output says so.
TEST(CliPlan, ASmallFileFromAServerWithoutRangeIsReadWholeAndSaysSo) {
  PlanCliFixture f;
  const auto path = f.dir.path() / "tiny.gguf";
  testing::tiny_qwen35_model().write(path);
  auto log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer peer(testing::whole_files({{"/tiny.gguf", path}}, log));
  const auto r = f.plan({peer.url() + "/tiny.gguf", "--machine", "gb10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(testing::contains(r.out, "the whole file: the server ignores Range requests"))
      << r.out;
}

TEST(CliPlan, RemoteFailuresAreClearAndWriteNothing) {
  PlanCliFixture f;
  auto log = std::make_shared<testing::PeerLog>();
  {
    testing::HostilePeer peer(testing::ignores_ranges(std::uint64_t{70} << 30, log));
    const auto r = f.plan({peer.url() + "/big.gguf", "--machine", "gb10"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(testing::contains(r.err, "ignores Range requests")) << r.err;
  }
  {
    testing::HostilePeer peer(testing::ranged_files({}, log));
    const auto r = f.plan({peer.url() + "/gone.gguf", "--machine", "gb10", "--json"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(testing::contains(r.err, "answered HTTP 404")) << r.err;
    EXPECT_EQ(json::parse(r.out)["exit_code"], 1) << r.out;
  }
  {
    testing::HostilePeer peer(testing::redirects({{"/a.gguf", "/a.gguf"}}, log));
    const auto r = f.plan({peer.url() + "/a.gguf", "--machine", "gb10"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(testing::contains(r.err, "the redirects loop")) << r.err;
  }
  {
    testing::HostilePeer peer(
        testing::drips_ranges(std::uint64_t{1} << 30, std::chrono::milliseconds(300), log));
    const auto start = std::chrono::steady_clock::now();
    const auto r = f.plan({peer.url() + "/slow.gguf", "--machine", "gb10", "--read-timeout", "1"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(testing::contains(r.err, "no complete answer from " + peer.url() + "/slow.gguf"))
        << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  }
  EXPECT_TRUE(f.home_untouched());
}

TEST(CliPlan, ASplitModelOverHttpReadsEveryShardsHeader) {
  PlanCliFixture f;
  const auto shards = testing::write_split_report_model(f.dir.path(), "big", 3);
  std::map<std::string, std::filesystem::path> served;
  for (const auto& shard : shards) {
    served["/m/" + shard.filename().string()] = shard;
  }
  auto log = std::make_shared<testing::PeerLog>();
  testing::HostilePeer peer(testing::ranged_files(served, log));
  const json remote = f.plan_json({peer.url() + "/m/big-00001-of-00003.gguf", "--machine", "gb10"});
  const json local = f.plan_json({shards.front().string(), "--machine", "gb10"});
  ASSERT_FALSE(remote.is_null());
  EXPECT_EQ(remote["model"]["files"].size(), 3u);
  // The later shards hold tensor infos only: one small range each.
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_LE(remote["model"]["files"][i]["bytes_read"].get<std::uint64_t>(), 256u * 1024) << i;
  }
  EXPECT_EQ(remote["plan"].dump(), local["plan"].dump());
  std::set<std::string> paths;
  for (const auto& line : log->lines()) {
    paths.insert(line.substr(4, line.find(' ', 4) - 4));
  }
  EXPECT_EQ(paths.size(), 3u);
}

// A tiny model on a 25 GB CPU machine: the default profile's 24 GiB prompt cache does not fit
// the budget (22 GB − the 12 GB reserve), and launch's fit lowers it. The table comes from the
// same fit: every cell is the model's whole training context (32768), not "none fits".
struct SmallBox {
  explicit SmallBox(const PlanCliFixture& f) {
    testing::tiny_qwen35_model().write(f.dir.path() / "tiny-qwen35.gguf");
    model = (f.dir.path() / "tiny-qwen35.gguf").string();
    machine = (f.dir.path() / "box.json").string();
    std::ofstream(machine) << R"({"name": "25 GB box", "memory_gb": 25, "available_gb": 22})";
  }
  std::string model;
  std::string machine;
};

TEST(CliPlan, TheTableAndLaunchsChoiceComeFromOneFit) {
  PlanCliFixture f;
  const SmallBox box(f);
  const json doc = f.plan_json({box.model, "--machine", box.machine});
  const json& plan = doc["plan"];
  ASSERT_TRUE(plan["launch"]["fits"]) << plan["launch"].dump();
  EXPECT_TRUE(plan["launch"]["fitted"]) << "the fit lowered the prompt cache";
  ASSERT_EQ(plan["what_fits"].size(), 4u);
  for (const json& row : plan["what_fits"]) {
    EXPECT_EQ(row["ctx_per_slot_f16"], 32768) << row.dump();
    EXPECT_EQ(row["ctx_per_slot_q8_0"], 32768) << row.dump();
  }
  const auto text = f.plan({box.model, "--machine", box.machine});
  EXPECT_EQ(text.exit_code, 0) << text.err << text.out;
  EXPECT_EQ(text.out.find("none fits"), std::string::npos) << text.out;
}

// Without a bandwidth (a CPU machine, no probe saved) the ceiling says how to give one, and
// offers only what exists here: plan's own --bandwidth, not a GPU bench this machine lacks.
TEST(CliPlan, BandwidthGivesTheCeilingThatTheAdviceAsksFor) {
  PlanCliFixture f;
  const SmallBox box(f);
  const json unknown = f.plan_json({box.model, "--machine", box.machine});
  const json& missing = unknown["plan"]["decode_ceiling"];
  EXPECT_FALSE(missing["available"]);
  const std::string why = missing["missing"];
  EXPECT_NE(why.find("give --bandwidth GBPS"), std::string::npos) << why;
  EXPECT_EQ(why.find("quick-bench"), std::string::npos) << why;

  const json given = f.plan_json({box.model, "--machine", box.machine, "--bandwidth", "50"});
  const json& ceiling = given["plan"]["decode_ceiling"];
  ASSERT_TRUE(ceiling["available"]) << ceiling.dump();
  EXPECT_EQ(ceiling["bandwidth_bytes_per_second"], 50e9);
  EXPECT_EQ(ceiling["bandwidth_source"], "--bandwidth");
  const double bytes = ceiling["bytes_per_token"];
  EXPECT_DOUBLE_EQ(ceiling["tps"].get<double>(), 50e9 / bytes);

  const auto bad = f.plan({box.model, "--machine", box.machine, "--bandwidth", "0"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
}

TEST(CliPlan, MachineErrorsAreUsageErrors) {
  PlanCliFixture f;
  const auto bad = f.dir.write("box.json", R"({"memory_gb": "lots"})");
  const auto r = f.plan({f.model, "--machine", bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(testing::contains(r.err, "field 'memory_gb' has the wrong type")) << r.err;
}

}  // namespace
}  // namespace gb10tune
