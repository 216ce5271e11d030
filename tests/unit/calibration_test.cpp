#include "gb10tune/plan/calibration.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "support/test_context.hpp"
#include "support/test_models.hpp"
#include "support/units.hpp"

namespace gb10tune::plan {
namespace {

using testing::kGiB;
using testing::kMiB;

// Buffer lines of a CUDA llama-server at -lv 4 (llama.cpp 3f545be, the K22 run), with the
// debug line that must not count and the KV cache's summary line.
constexpr std::string_view kCudaLog =
    "load_tensors: offloaded 9/9 layers to GPU\n"
    "load_tensors:        CUDA0 model buffer size =  1858.63 MiB\n"
    "load_tensors:   CPU_Mapped model buffer size =     2.50 MiB\n"
    "llama_context:  CUDA_Host  output buffer size =     0.00 MiB\n"
    "llama_kv_cache:      CUDA0 KV buffer size =   512.00 MiB\n"
    "llama_kv_cache: size =  512.00 MiB ( 32768 cells,   8 layers,  2/1 seqs), K (f16):  256.00 "
    "MiB, V (f16):  256.00 MiB\n"
    "sched_reserve:      CUDA0 compute buffer size =    92.01 MiB\n"
    "sched_reserve:  CUDA_Host compute buffer size =    40.01 MiB\n"
    "graph_reserve:      CUDA0 compute buffer size is  92.0100 MiB, matches expectation of  "
    "92.0100 MiB\n";

TEST(Calibration, BufferLinesAreSummedByKind) {
  const auto buffers = parse_buffer_lines(kCudaLog);
  ASSERT_TRUE(buffers);
  EXPECT_EQ(buffers->lines, 6);
  EXPECT_EQ(buffers->model_bytes, static_cast<std::uint64_t>((1858.63 + 2.50) * 1048576.0 + 0.5));
  EXPECT_EQ(buffers->kv_bytes, 512 * kMiB);
  EXPECT_EQ(buffers->compute_bytes, static_cast<std::uint64_t>(92.01 * 1048576.0 + 0.5) +
                                        static_cast<std::uint64_t>(40.01 * 1048576.0 + 0.5));
  EXPECT_EQ(buffers->output_bytes, 0u);
  EXPECT_FALSE(parse_buffer_lines("main: model loaded\nbuffer size = lots\n"));
  const auto rs = parse_buffer_lines(
      "llama_memory_recurrent:        CPU RS buffer size =    "
      "18.00 MiB\n");
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->recurrent_bytes, 18 * kMiB);
}

MemoryPlan plan_of(std::uint64_t weights, std::uint64_t kv) {
  MemoryPlan plan;
  plan.weights_bytes = weights;
  plan.kv_full_bytes = kv;
  return plan;
}

TEST(Calibration, CpuMeasurementCountsWeightsNotYetResident) {
  const MemoryPlan plan = plan_of(800 * kMiB, 100 * kMiB);
  ProcessReading mmapped{.vm_rss = 600 * kMiB,
                         .rss_anon = 200 * kMiB,
                         .rss_file = 400 * kMiB,
                         .rss_shmem = 0,
                         .vm_hwm = std::nullopt,
                         .gpu_bytes = std::nullopt,
                         .log = std::nullopt};
  const Measurement m = measure(plan, PlanBackend::cpu, mmapped);
  ASSERT_TRUE(m.measured_bytes);
  EXPECT_EQ(m.weights_not_resident, 400 * kMiB);
  EXPECT_EQ(*m.measured_bytes, 1000 * kMiB);
  EXPECT_NE(m.how.find("not resident"), std::string::npos);

  // Loaded without mmap: the weights are anonymous memory; RSS is the whole figure.
  ProcessReading loaded = mmapped;
  loaded.rss_anon = 950 * kMiB;
  loaded.rss_file = 10 * kMiB;
  loaded.vm_rss = 960 * kMiB;
  const Measurement n = measure(plan, PlanBackend::cpu, loaded);
  EXPECT_EQ(n.weights_not_resident, 0u);
  EXPECT_EQ(*n.measured_bytes, 960 * kMiB);
}

// The CPU llama-server of docs/memory-plan.md right after load: the compute buffer's pages are
// not touched yet. The log's buffer lines say what llama.cpp reserved, not what the process
// holds: the measurement stays the resident memory (the plan's side leaves the untouched
// buffers out, expected_memory.hpp), never the reserved size.
TEST(Calibration, CpuMeasurementIsWhatIsResidentNotWhatTheLogReserved) {
  const MemoryPlan plan = plan_of(607303680, 384 * kMiB);
  ProcessReading reading;
  reading.rss_anon = 390 * kMiB;
  reading.rss_file = 592 * kMiB;
  reading.vm_rss = 982 * kMiB;
  reading.log = parse_buffer_lines(
      "load_tensors:   CPU_Mapped model buffer size =   579.17 MiB\n"
      "llama_kv_cache:        CPU KV buffer size =   384.00 MiB\n"
      "sched_reserve:        CPU compute buffer size =    68.00 MiB\n");
  ASSERT_TRUE(reading.log);
  const Measurement m = measure(plan, PlanBackend::cpu, reading);
  EXPECT_EQ(*m.measured_bytes, 982 * kMiB);
  EXPECT_EQ(m.how.find("not touched"), std::string::npos) << m.how;
}

// The repacked copy of the weights (CPU_REPACK) is a model buffer of its own, anonymous memory
// written while loading: the log's lines name it apart from the mapped file, and the
// measurement is what is resident (the plan's figure at load holds the copy, expected_memory).
// Real CPU runs of a q4_0 llama (tests/fixtures/llama-server/memory/repack.json).
TEST(Calibration, CpuMeasurementParsesTheRepackedCopyAsAModelBufferOfItsOwn) {
  const MemoryPlan plan = plan_of(287173120, 64 * kMiB);
  ProcessReading reading;
  reading.rss_anon = 274480ull << 10;
  reading.rss_file = 293444ull << 10;
  reading.vm_rss = reading.rss_anon + reading.rss_file;
  reading.log = parse_buffer_lines(
      "load_tensors:   CPU_Mapped model buffer size =   273.87 MiB\n"
      "load_tensors:   CPU_REPACK model buffer size =   193.50 MiB\n"
      "llama_kv_cache:        CPU KV buffer size =    64.00 MiB\n"
      "sched_reserve:        CPU compute buffer size =    53.01 MiB\n");
  ASSERT_TRUE(reading.log);
  EXPECT_EQ(reading.log->unmapped_model_bytes, static_cast<std::uint64_t>(193.5 * 1048576.0));
  const Measurement m = measure(plan, PlanBackend::cpu, reading);
  EXPECT_EQ(*m.measured_bytes, reading.vm_rss);
  EXPECT_EQ(m.how.find("not touched"), std::string::npos) << m.how;
}

TEST(Calibration, CudaNeedsNvmlAndAddsItToTheHostRss) {
  const MemoryPlan plan = plan_of(1858 * kMiB, 512 * kMiB);
  ProcessReading reading;
  reading.vm_rss = 371 * kMiB;
  reading.rss_anon = 158 * kMiB;
  reading.rss_file = 161 * kMiB;
  const Measurement unknown = measure(plan, PlanBackend::cuda, reading);
  EXPECT_FALSE(unknown.measured_bytes);
  EXPECT_NE(unknown.unknown_because.find("NVML"), std::string::npos);
  reading.gpu_bytes = 3052 * kMiB;
  const Measurement m = measure(plan, PlanBackend::cuda, reading);
  ASSERT_TRUE(m.measured_bytes);
  EXPECT_EQ(*m.measured_bytes, (3052 + 371) * kMiB);
  EXPECT_NEAR(error_percent(1000, 1050), 5.0, 1e-9);
  EXPECT_EQ(error_percent(0, 5), 0.0);
}

CalibrationRun run_of(std::uint64_t planned, std::uint64_t measured) {
  CalibrationRun run;
  run.planned_bytes = planned;
  run.measured_bytes = measured;
  return run;
}

ConfigShape shape_of(std::uint32_t slots, std::string offload = "none") {
  ConfigShape shape;
  shape.offload = std::move(offload);
  shape.cache_k = "f16";
  shape.cache_v = "f16";
  shape.ubatch = 512;
  shape.batch = 2048;
  shape.slots = slots;
  shape.projector = "none";
  return shape;
}

TEST(Calibration, CorrectionIsTheMedianOfTheRunsOfOneKeyWithinTheTolerance) {
  const CalibrationKey cpu{"llama", "build-a", PlanBackend::cpu, shape_of(1)};
  const CalibrationKey cuda{"llama", "build-a", PlanBackend::cuda, shape_of(1, "full")};
  CalibrationStore store;
  EXPECT_FALSE(correction_for(store, cpu));
  store.add(cpu, run_of(10000, 10300));  // +300 (+3%)
  store.add(cpu, run_of(10000, 9900));   // -100
  store.add(cpu, run_of(20000, 20250));  // +250
  const auto c = correction_for(store, cpu);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, 250);
  EXPECT_EQ(c->runs, 3u);
  EXPECT_NE(c->source.find("llama on cpu (none offload"), std::string::npos) << c->source;
  EXPECT_FALSE(correction_for(store, cuda));  // another backend learns on its own
  // Runs measured against an older plan (it modelled less) no longer count.
  CalibrationRun old = run_of(10000, 10100);
  old.plan_model = kCalibrationPlanModel - 1;
  store.add(cuda, old);
  EXPECT_FALSE(correction_for(store, cuda));
  store.add(cpu, old);
  EXPECT_EQ(correction_for(store, cpu)->bytes, 250);
  EXPECT_EQ(correction_for(store, cpu)->runs, 3u);
  // Nor do runs further off than verify's tolerance: the idle CPU process of issue 22 (-65%)
  // and a partial offload at +16.5% are wrong plans, not constants to learn.
  store.add(cpu, run_of(10000, 3470));
  store.add(cpu, run_of(10000, 11650));
  EXPECT_EQ(correction_for(store, cpu)->bytes, 250);
  EXPECT_EQ(correction_for(store, cpu)->runs, 3u);
  EXPECT_NE(unapplied_runs_note(store, cpu).find("off by more than 5%"), std::string::npos)
      << unapplied_runs_note(store, cpu);

  for (int i = 0; i < 20; ++i) {
    store.add(cpu, run_of(1000, 1010));
  }
  EXPECT_EQ(store.find(cpu)->runs.size(), kCalibrationRunsKept);
  EXPECT_EQ(correction_for(store, cpu)->bytes, 10);
  for (std::size_t i = 0; i < kCalibrationKeysKept + 5; ++i) {
    store.add({"arch" + std::to_string(i), "b", PlanBackend::cpu, shape_of(1)}, run_of(100, 101));
  }
  EXPECT_EQ(store.entries.size(), kCalibrationKeysKept);
  EXPECT_EQ(store.find(cpu), nullptr);  // the least recently measured went first
}

// Issue 23: a partial-offload run recorded for (llama, build, cuda) moved the next full-offload
// plan. The key now carries the configuration's shape: a run applies to its own shape only.
TEST(Calibration, RunsOfOneConfigurationShapeNeverCorrectAnother) {
  const auto facts = testing::describe(testing::tiny_qwen35_model());
  ASSERT_TRUE(facts);
  PlanConfig config;
  config.backend = PlanBackend::cuda;
  const CalibrationKey full = calibration_key(*facts, "b", config);
  config.gpu_layers = 5;
  const CalibrationKey partial = calibration_key(*facts, "b", config);
  EXPECT_EQ(full.shape->offload, "full");
  EXPECT_EQ(partial.shape->offload, "partial 5/10");
  EXPECT_NE(full, partial);
  CalibrationStore store;
  store.add(partial, run_of(10000, 10400));
  ASSERT_TRUE(correction_for(store, partial));
  EXPECT_FALSE(correction_for(store, full));
  EXPECT_NE(unapplied_runs_note(store, full).find("1 other configuration shape"), std::string::npos)
      << unapplied_runs_note(store, full);

  // Every setting the formulas may miss is part of the shape; the context size is not.
  PlanConfig base;
  const ConfigShape shape = *calibration_key(*facts, "b", base).shape;
  const auto differs = [&](const std::function<void(PlanConfig&)>& change) {
    PlanConfig c = base;
    change(c);
    return *calibration_key(*facts, "b", c).shape != shape;
  };
  EXPECT_TRUE(differs([](PlanConfig& c) { c.cache_k = gguf::GgmlType::q8_0; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.cache_v = gguf::GgmlType::q8_0; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.flash_attention = false; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.ubatch = 1024; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.slots = 3; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.kv_unified = true; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.mtp = true; }));
  EXPECT_TRUE(differs([](PlanConfig& c) { c.tensor_split = {3, 1}; }));
  EXPECT_FALSE(differs([](PlanConfig& c) { c.ctx_total = 65536; }));
  EXPECT_NE(calibration_key(*facts, "b", base, 2).shape->offload.find("rpc 2 worker(s)"),
            std::string::npos);
}

// A calibration.json written before the shape was recorded: read, kept, never applied, and
// the plan says so.
TEST(Calibration, AnOlderFileWithoutShapesIsReadButNotApplied) {
  const nlohmann::json doc = nlohmann::json::parse(R"({"schema_version": 1, "entries": [
      {"architecture": "qwen35", "build": "b", "backend": "cpu",
       "runs": [{"planned_bytes": 1717986918, "measured_bytes": 586885939, "plan_model": 2}]}]})");
  const auto store = store_from_json(doc, "calibration.json");
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_EQ(store->entries.size(), 1u);
  EXPECT_FALSE(store->entries[0].key.shape);
  const CalibrationKey key{"qwen35", "b", PlanBackend::cpu, shape_of(3)};
  EXPECT_FALSE(correction_for(*store, key));
  EXPECT_NE(unapplied_runs_note(*store, key).find("older gb10tune"), std::string::npos)
      << unapplied_runs_note(*store, key);
  // Written back, the entry stays without a shape.
  EXPECT_FALSE(store_to_json(*store)["entries"][0].contains("shape"));
  auto broken = doc;
  broken["entries"][0]["shape"] = {{"offload", 3}};
  const auto bad = store_from_json(broken, "calibration.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("shape"), std::string::npos) << bad.error().message;
}

// Issue 22: an idle CPU process learned -1051 MiB and the next plan dropped below what the
// same settings touched. A correction moves a plan by at most 5% of its figure at load, and
// never below the buffers llama.cpp allocates (only the runtime and the margin can go).
TEST(Calibration, ACorrectionIsBoundedForThePlanItIsAppliedTo) {
  const auto facts = testing::describe(testing::tiny_qwen35_model());
  ASSERT_TRUE(facts);
  PlanConfig config = testing::report_tuned_config();
  config.cache_ram_bytes = 0;
  const auto plain = make_plan(*facts, config, {});
  ASSERT_TRUE(plain);
  config.calibration_bytes = -1051 * static_cast<std::int64_t>(kMiB);
  config.calibration_source = "median of 1 measured run(s)";
  const auto down = make_plan(*facts, config, {});
  ASSERT_TRUE(down);
  const std::uint64_t buffers = plain->load_bytes() - plain->runtime_bytes + plain->kv_cells_bytes;
  const double at_load = static_cast<double>(uncalibrated_memory(*plain, PlanBackend::cpu).at_load);
  EXPECT_NEAR(
      static_cast<double>(down->calibration_bytes),
      -std::min(at_load * 0.05, static_cast<double>(plain->runtime_bytes - plain->kv_cells_bytes +
                                                    plain->overhead_bytes)),
      1.0);
  EXPECT_GE(down->total_bytes, buffers);
  EXPECT_NE(down->calibration_source.find("bounded"), std::string::npos)
      << down->calibration_source;
  config.calibration_bytes = 10 * static_cast<std::int64_t>(kGiB);
  const auto up = make_plan(*facts, config, {});
  ASSERT_TRUE(up);
  EXPECT_NEAR(static_cast<double>(up->calibration_bytes), at_load * 0.05, 1.0);
  // Within the bound it is applied as learned.
  config.calibration_bytes = -static_cast<std::int64_t>(kMiB);
  EXPECT_EQ(make_plan(*facts, config, {})->calibration_bytes, -static_cast<std::int64_t>(kMiB));
}

TEST(Calibration, StoreRoundTripsAndRejectsWhatItCannotTrust) {
  testing::TempDir dir;
  const auto path = dir.path() / "calibration.json";
  auto empty = read_calibration_store(path);
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_TRUE(empty->entries.empty());

  CalibrationStore store;
  CalibrationRun run = run_of(1000, 1234);
  run.gpu_bytes = 77;
  run.rss_file = 5;
  run.on_demand_bytes = 99;
  const CalibrationKey key{"qwen35", "b1", PlanBackend::cuda, shape_of(2, "partial 5/10")};
  store.add(key, run);
  ASSERT_TRUE(write_calibration_store(path, store));
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  const auto back = read_calibration_store(path);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->entries.size(), 1u);
  EXPECT_EQ(back->entries[0].key, key);
  EXPECT_EQ(back->entries[0].runs[0].difference(), 234);
  EXPECT_EQ(back->entries[0].runs[0].on_demand_bytes, 99u);
  EXPECT_EQ(back->entries[0].runs[0].gpu_bytes, 77u);
  EXPECT_EQ(back->entries[0].runs[0].plan_model, kCalibrationPlanModel);
  EXPECT_FALSE(back->entries[0].runs[0].log_buffer_bytes);

  dir.write("bad.json", "{\"schema_version\": 1, \"entries\": [{\"architecture\": 3}]}");
  const auto bad = read_calibration_store(dir.path() / "bad.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("bad.json"), std::string::npos);
  dir.write("junk.json", "{not json");
  EXPECT_FALSE(read_calibration_store(dir.path() / "junk.json"));

  const auto link = dir.path() / "link.json";
  std::filesystem::create_symlink(path, link);
  const auto linked = read_calibration_store(link);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("symlink"), std::string::npos);
}

TEST(Calibration, PlanTotalAddsTheCorrection) {
  auto facts = testing::describe(testing::report_model());
  ASSERT_TRUE(facts);
  PlanConfig config;
  config.ctx_total = 4096;
  config.cache_ram_bytes = 0;
  config.overhead_bytes = 0;
  const auto plain = make_plan(*facts, config, {});
  config.calibration_bytes = 3 * static_cast<std::int64_t>(kMiB);
  config.calibration_source = "median of 1 measured run(s)";
  const auto up = make_plan(*facts, config, {});
  ASSERT_TRUE(plain && up);
  EXPECT_EQ(up->total_bytes, plain->total_bytes + 3 * kMiB);
  EXPECT_EQ(up->calibration_bytes, 3 * static_cast<std::int64_t>(kMiB));
  EXPECT_EQ(up->calibration_source, "median of 1 measured run(s)");
  EXPECT_EQ(up->load_bytes(), plain->load_bytes());  // the modelled figure stays uncalibrated
  EXPECT_EQ(expected_memory(*up, PlanBackend::cpu).at_load,
            uncalibrated_memory(*plain, PlanBackend::cpu).at_load + 3 * kMiB);
}

}  // namespace
}  // namespace gb10tune::plan
