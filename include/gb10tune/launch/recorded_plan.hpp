// The parts of a launch record's plan document that other commands act on (verify, stop,
// watch, the next launch), as types: read once, by the record's reader, so that no command
// picks through the JSON itself. The plan document is what `launch --dry-run --json` prints;
// records of older gb10tune versions lack some parts, and a damaged part reads as unknown
// (empty, 0 or nullopt), never as an error: these are evidence, not the record's identity.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/rpc/rpc_protocol.hpp"

namespace gb10tune::launch {

// One GPU of a per-device plan (plan.devices.gpus[]).
struct RecordedGpu {
  std::string name;                 // "CUDA0"
  std::string description;          // "NVIDIA GeForce RTX 4090"; "" when not recorded
  std::string pci_bus_id;           // "" in a record written before bus ids
  std::uint64_t total_bytes = 0;    // what the plan put on it
  std::uint64_t service_bytes = 0;  // the part that is the CUDA runtime's own
};

// The host side of a per-device plan (plan.devices.host); absent figures read as 0.
struct RecordedHost {
  std::uint64_t weights_bytes = 0;
  std::uint64_t mapped_extra_bytes = 0;
  std::uint64_t cache_bytes = 0;
  std::uint64_t buffers_bytes = 0;
  std::uint64_t projector_bytes = 0;
  std::uint64_t runtime_bytes = 0;
  std::optional<std::uint64_t> total_bytes;  // nullopt when not recorded
  std::uint64_t service_bytes = 0;

  // What the process holds once loaded: weights, mapped extra, caches, buffers, projector and
  // runtime.
  std::uint64_t load_bytes() const;
};

// How the record planned the devices.
enum class DevicePlanKind {
  not_recorded,  // a record of a gb10tune before per-device plans (no plan.devices)
  one_pool,      // planned as one pool: no discrete GPU was seen (plan.devices null)
  per_device,    // a plan per GPU and one for the host
};

// The per-device plan of a record.
struct RecordedDevices {
  DevicePlanKind kind = DevicePlanKind::not_recorded;
  std::vector<RecordedGpu> gpus;     // per_device: each GPU with a name, in plan order
  std::optional<RecordedHost> host;  // per_device: nullopt when not recorded
};

// One RPC worker as launch contacted it (rpc.workers[]).
struct RecordedWorker {
  std::string endpoint;                    // "10.0.0.2:50052" as recorded; "" when unreadable
  std::string protocol_version;            // "5.1.0"; "" when not recorded
  std::vector<rpc::DeviceMemory> devices;  // free and total memory at launch, per device
};

// One node of the plan across RPC workers (rpc.nodes[]): enough to read the head's log per node.
struct RecordedNode {
  std::string node;                  // "10.0.0.2:50052", or "head"
  std::vector<std::string> devices;  // "RPC0", "CUDA0", …
  std::uint64_t load_bytes = 0;
  std::uint64_t buffer_bytes = 0;
};

// A launch across RPC workers.
struct RecordedRpc {
  std::string head_protocol_version;  // "" when not recorded
  std::vector<RecordedWorker> workers;
  std::vector<RecordedNode> nodes;
};

// What the record's plan document says that other commands use.
struct RecordedPlan {
  // The reserve the plan kept for the system (settings.reserve.value); nullopt when not
  // recorded or not a size.
  std::optional<std::uint64_t> reserve_bytes;
  std::uint64_t context_length = 0;  // the model's training context; 0 when not recorded
  RecordedDevices devices;
  std::optional<RecordedRpc> rpc;  // nullopt: launched on one machine
};

// Reads `plan_document` (a launch record's "plan"). Never fails: what is missing or of another
// type reads as unknown (see RecordedPlan).
RecordedPlan read_recorded_plan(const nlohmann::json& plan_document);

}  // namespace gb10tune::launch
