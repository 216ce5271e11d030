#include "gb10tune/launch/recorded_plan.hpp"

#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

using nlohmann::json;

// The member `key` of `doc`, or nullptr when `doc` is not an object or has no such member.
const json* member(const json& doc, const char* key) {
  if (!doc.is_object()) {
    return nullptr;
  }
  const auto it = doc.find(key);
  return it == doc.end() ? nullptr : &*it;
}

// A string member; `missing` when absent or of another type.
std::string text_of(const json& doc, const char* key, const std::string& missing = "") {
  const json* value = member(doc, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : missing;
}

// An unsigned member; nullopt when absent or of another type.
std::optional<std::uint64_t> bytes_of(const json& doc, const char* key) {
  const json* value = member(doc, key);
  if (value == nullptr || !value->is_number_unsigned()) {
    return std::nullopt;
  }
  return value->get<std::uint64_t>();
}

// The members of an array member (none when absent or not an array).
const json& items_of(const json& doc, const char* key) {
  static const json kNone = json::array();
  const json* value = member(doc, key);
  return value != nullptr && value->is_array() ? *value : kNone;
}

RecordedHost read_host(const json& host) {
  RecordedHost h;
  h.weights_bytes = bytes_of(host, "weights_bytes").value_or(0);
  h.mapped_extra_bytes = bytes_of(host, "mapped_extra_bytes").value_or(0);
  h.cache_bytes = bytes_of(host, "cache_bytes").value_or(0);
  h.buffers_bytes = bytes_of(host, "buffers_bytes").value_or(0);
  h.projector_bytes = bytes_of(host, "projector_bytes").value_or(0);
  h.runtime_bytes = bytes_of(host, "runtime_bytes").value_or(0);
  h.total_bytes = bytes_of(host, "total_bytes");
  h.service_bytes = bytes_of(host, "service_bytes").value_or(0);
  return h;
}

RecordedDevices read_devices(const json* figures) {
  RecordedDevices out;
  const json* devices = figures != nullptr ? member(*figures, "devices") : nullptr;
  if (devices == nullptr) {
    return out;  // not_recorded
  }
  const json* gpus = member(*devices, "gpus");
  if (gpus == nullptr || !gpus->is_array()) {
    out.kind = DevicePlanKind::one_pool;
    return out;
  }
  out.kind = DevicePlanKind::per_device;
  for (const json& gpu : *gpus) {
    const json* name = member(gpu, "name");
    if (name == nullptr || !name->is_string()) {
      continue;
    }
    out.gpus.push_back({name->get<std::string>(), text_of(gpu, "description"),
                        text_of(gpu, "pci_bus_id"), bytes_of(gpu, "total_bytes").value_or(0),
                        bytes_of(gpu, "service_bytes").value_or(0)});
  }
  if (const json* host = member(*devices, "host"); host != nullptr && host->is_object()) {
    out.host = read_host(*host);
  }
  return out;
}

RecordedRpc read_rpc(const json& rpc) {
  RecordedRpc out;
  out.head_protocol_version = text_of(rpc, "head_protocol_version");
  for (const json& w : items_of(rpc, "workers")) {
    RecordedWorker worker{text_of(w, "endpoint"), text_of(w, "protocol_version"), {}};
    for (const json& d : items_of(w, "devices")) {
      worker.devices.push_back(
          {bytes_of(d, "free_bytes").value_or(0), bytes_of(d, "total_bytes").value_or(0)});
    }
    out.workers.push_back(std::move(worker));
  }
  for (const json& n : items_of(rpc, "nodes")) {
    RecordedNode node;
    node.node = text_of(n, "node");
    for (const json& name : items_of(n, "devices")) {
      node.devices.push_back(name.is_string() ? name.get<std::string>() : std::string());
    }
    node.load_bytes = bytes_of(n, "load_bytes").value_or(0);
    node.buffer_bytes = bytes_of(n, "buffer_bytes").value_or(0);
    out.nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace

std::uint64_t RecordedHost::load_bytes() const {
  return weights_bytes + mapped_extra_bytes + cache_bytes + buffers_bytes + projector_bytes +
         runtime_bytes;
}

RecordedPlan read_recorded_plan(const json& plan_document) {
  RecordedPlan out;
  if (const json* settings = member(plan_document, "settings")) {
    if (const json* reserve = member(*settings, "reserve")) {
      const std::string value = text_of(*reserve, "value");
      if (!value.empty()) {
        out.reserve_bytes = parse_size(value);
      }
    }
  }
  if (const json* model = member(plan_document, "model")) {
    out.context_length = bytes_of(*model, "context_length").value_or(0);
  }
  const json* figures = member(plan_document, "plan");
  out.devices = read_devices(figures != nullptr && figures->is_object() ? figures : nullptr);
  if (const json* rpc = member(plan_document, "rpc"); rpc != nullptr && rpc->is_object()) {
    out.rpc = read_rpc(*rpc);
  }
  return out;
}

}  // namespace gb10tune::launch
