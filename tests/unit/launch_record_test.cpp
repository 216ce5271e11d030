// The launch record's one reader: what verify, stop, watch and the next launch act on comes out
// of the plan document as types, for records of this gb10tune and of older ones.
#include "gb10tune/launch/launch_record.hpp"

#include <gtest/gtest.h>

namespace gb10tune::launch {
namespace {

using nlohmann::json;

// A plan document as launch writes it across two GPUs and one RPC worker.
json plan_document_of_now() {
  json gpus = json::array();
  gpus.push_back({{"name", "CUDA0"},
                  {"description", "NVIDIA GeForce RTX 4090"},
                  {"pci_bus_id", "0000:01:00.0"},
                  {"total_bytes", 20ull << 30},
                  {"service_bytes", 300ull << 20}});
  gpus.push_back({{"name", "CUDA1"},
                  {"description", "NVIDIA GeForce RTX 4090"},
                  {"pci_bus_id", nullptr},
                  {"total_bytes", 18ull << 30},
                  {"service_bytes", 0}});
  const json host = {{"weights_bytes", 1ull << 30},   {"mapped_extra_bytes", 2ull << 20},
                     {"cache_bytes", 3ull << 20},     {"buffers_bytes", 4ull << 20},
                     {"projector_bytes", 5ull << 20}, {"runtime_bytes", 6ull << 20},
                     {"total_bytes", 2ull << 30},     {"service_bytes", 7ull << 20}};
  const json rpc = {
      {"head_protocol_version", "5.1.0"},
      {"workers", json::array({{{"endpoint", "10.0.0.2:50052"},
                                {"protocol_version", "5.0.1"},
                                {"devices", json::array({{{"free_bytes", 60ull << 30},
                                                          {"total_bytes", 64ull << 30}}})}}})},
      {"nodes", json::array({{{"node", "10.0.0.2:50052"},
                              {"devices", {"RPC0"}},
                              {"load_bytes", 9ull << 30},
                              {"buffer_bytes", 8ull << 30}},
                             {{"node", "head"}, {"devices", {"CUDA0", "CUDA1"}}}})}};
  return {{"settings", {{"reserve", {{"value", "8GiB"}, {"source", "command line"}}}}},
          {"model", {{"context_length", 262144}}},
          {"plan", {{"weights_bytes", 30ull << 30}, {"devices", {{"gpus", gpus}, {"host", host}}}}},
          {"rpc", rpc}};
}

// Through the file's text and back, as verify, stop and watch read it.
LaunchRecord written_and_read(const json& plan_document) {
  LaunchRecord record;
  record.pid = 42;
  record.plan = plan_document;
  const auto back = record_from_json(json::parse(record_to_json(record).dump()), "launch.json");
  EXPECT_TRUE(back) << back.error().message;
  return back ? *back : LaunchRecord{};
}

TEST(LaunchRecord, ThePlanDocumentReadsAsTypes) {
  const RecordedPlan planned = written_and_read(plan_document_of_now()).planned;
  EXPECT_EQ(planned.reserve_bytes, 8ull << 30);
  EXPECT_EQ(planned.context_length, 262144u);
  ASSERT_EQ(planned.devices.kind, DevicePlanKind::per_device);
  ASSERT_EQ(planned.devices.gpus.size(), 2u);
  EXPECT_EQ(planned.devices.gpus[0].name, "CUDA0");
  EXPECT_EQ(planned.devices.gpus[0].description, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(planned.devices.gpus[0].pci_bus_id, "0000:01:00.0");
  EXPECT_EQ(planned.devices.gpus[0].total_bytes, 20ull << 30);
  EXPECT_EQ(planned.devices.gpus[0].service_bytes, 300ull << 20);
  EXPECT_EQ(planned.devices.gpus[1].pci_bus_id, "");
  ASSERT_TRUE(planned.devices.host);
  EXPECT_EQ(planned.devices.host->load_bytes(), (1ull << 30) + (20ull << 20));
  EXPECT_EQ(planned.devices.host->total_bytes, 2ull << 30);
  EXPECT_EQ(planned.devices.host->service_bytes, 7ull << 20);
  ASSERT_TRUE(planned.rpc);
  EXPECT_EQ(planned.rpc->head_protocol_version, "5.1.0");
  ASSERT_EQ(planned.rpc->workers.size(), 1u);
  EXPECT_EQ(planned.rpc->workers[0].endpoint, "10.0.0.2:50052");
  EXPECT_EQ(planned.rpc->workers[0].protocol_version, "5.0.1");
  ASSERT_EQ(planned.rpc->workers[0].devices.size(), 1u);
  EXPECT_EQ(planned.rpc->workers[0].devices[0].free_bytes, 60ull << 30);
  EXPECT_EQ(planned.rpc->workers[0].devices[0].total_bytes, 64ull << 30);
  ASSERT_EQ(planned.rpc->nodes.size(), 2u);
  EXPECT_EQ(planned.rpc->nodes[0].devices, std::vector<std::string>{"RPC0"});
  EXPECT_EQ(planned.rpc->nodes[0].load_bytes, 9ull << 30);
  EXPECT_EQ(planned.rpc->nodes[0].buffer_bytes, 8ull << 30);
  EXPECT_EQ(planned.rpc->nodes[1].node, "head");
  EXPECT_EQ(planned.rpc->nodes[1].load_bytes, 0u);
}

// Older records: no per-device plan, one pool, GPUs without bus ids or a host part, no RPC, no
// reserve; all still read, each part as unknown.
TEST(LaunchRecord, OlderPlanDocumentsStillRead) {
  json doc = plan_document_of_now();
  doc.erase("rpc");
  doc.erase("settings");
  doc.erase("model");
  doc["plan"].erase("devices");
  RecordedPlan planned = written_and_read(doc).planned;
  EXPECT_FALSE(planned.reserve_bytes);
  EXPECT_EQ(planned.context_length, 0u);
  EXPECT_EQ(planned.devices.kind, DevicePlanKind::not_recorded);
  EXPECT_FALSE(planned.rpc);

  doc["plan"]["devices"] = nullptr;
  EXPECT_EQ(written_and_read(doc).planned.devices.kind, DevicePlanKind::one_pool);

  doc["plan"]["devices"] = {{"gpus", {{{"name", "CUDA0"}, {"total_bytes", 4ull << 30}}}}};
  planned = written_and_read(doc).planned;
  ASSERT_EQ(planned.devices.kind, DevicePlanKind::per_device);
  ASSERT_EQ(planned.devices.gpus.size(), 1u);
  EXPECT_EQ(planned.devices.gpus[0].pci_bus_id, "");
  EXPECT_EQ(planned.devices.gpus[0].total_bytes, 4ull << 30);
  EXPECT_FALSE(planned.devices.host);

  // A record of the oldest kind has an empty plan document.
  planned = written_and_read(json()).planned;
  EXPECT_EQ(planned.devices.kind, DevicePlanKind::not_recorded);
  EXPECT_FALSE(planned.rpc);
}

// A damaged part is unknown evidence, never an exception or a refused record.
TEST(LaunchRecord, DamagedPartsReadAsUnknown) {
  json doc = plan_document_of_now();
  doc["settings"]["reserve"]["value"] = "lots";
  doc["model"]["context_length"] = "long";
  doc["plan"]["devices"]["gpus"] = json::array({1, {{"name", 5}}, {{"name", "CUDA0"}}});
  doc["plan"]["devices"]["host"] = "none";
  doc["rpc"] = {{"head_protocol_version", 5},
                {"workers", json::array({1, {{"endpoint", 5}, {"devices", "x"}}})},
                {"nodes", json::array({"x", {{"node", 3}, {"load_bytes", "big"}}})}};
  const RecordedPlan planned = written_and_read(doc).planned;
  EXPECT_FALSE(planned.reserve_bytes);
  EXPECT_EQ(planned.context_length, 0u);
  ASSERT_EQ(planned.devices.gpus.size(), 1u);
  EXPECT_FALSE(planned.devices.host);
  ASSERT_TRUE(planned.rpc);
  EXPECT_EQ(planned.rpc->head_protocol_version, "");
  ASSERT_EQ(planned.rpc->workers.size(), 2u);
  EXPECT_EQ(planned.rpc->workers[1].endpoint, "");
  EXPECT_TRUE(planned.rpc->workers[1].devices.empty());
  ASSERT_EQ(planned.rpc->nodes.size(), 2u);
  EXPECT_EQ(planned.rpc->nodes[1].node, "");
  EXPECT_EQ(planned.rpc->nodes[1].load_bytes, 0u);
}

// launch --foreground's mark reads back; a record without it (an older gb10tune, a detached
// launch) is a detached server.
TEST(LaunchRecord, TheForegroundMarkReadsBackAndDefaultsToDetached) {
  LaunchRecord record;
  record.pid = 42;
  record.foreground = true;
  json doc = json::parse(record_to_json(record).dump());
  const auto back = record_from_json(doc, "launch.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->foreground);
  doc.erase("foreground");
  const auto older = record_from_json(doc, "launch.json");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_FALSE(older->foreground);
}

}  // namespace
}  // namespace gb10tune::launch
