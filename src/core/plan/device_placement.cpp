// The placement options of a llama-server command line (--tensor-split, --device, --main-gpu)
// and each GPU's budget from the devices llama.cpp would use: the input of the split over
// devices (device_plan.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "gb10tune/plan/device_plan.hpp"

namespace gb10tune::plan {

namespace {

// Splits "a,b/c" at commas and slashes (llama.cpp's split_string for -ts and -dev).
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (const char c : text) {
    if (c == ',' || c == '/') {
      out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(item);
  return out;
}

// The value of option `names` in `args` ("-ts X", "--tensor-split X", "--tensor-split=X").
std::optional<std::string> option_value(const std::vector<std::string>& args,
                                        std::initializer_list<std::string_view> names) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (const std::string_view name : names) {
      if (args[i] == name && i + 1 < args.size()) {
        value = args[i + 1];
      } else if (args[i].size() > name.size() + 1 && args[i].compare(0, name.size(), name) == 0 &&
                 args[i][name.size()] == '=') {
        value = args[i].substr(name.size() + 1);
      }
    }
  }
  return value;
}

}  // namespace

Expected<LayerPlacement> parse_placement(const std::vector<std::string>& args) {
  LayerPlacement out;
  if (const auto ts = option_value(args, {"-ts", "--tensor-split"})) {
    for (const std::string& item : split_list(*ts)) {
      float value = 0.0f;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value < 0) {
        return Error{fmt::format("--tensor-split '{}': '{}' is not a proportion; give one "
                                 "number per GPU, e.g. -ts 3,1",
                                 *ts, item),
                     ExitCode::usage};
      }
      out.tensor_split.push_back(value);
    }
  }
  if (const auto dev = option_value(args, {"-dev", "--device"})) {
    out.devices = split_list(*dev);
  }
  if (const auto mmdev = option_value(args, {"-mmdev", "--mmproj-device"})) {
    if (split_list(*mmdev).size() != 1) {
      return Error{fmt::format("--mmproj-device '{}': the projector goes to one device; name one "
                               "(CUDA0), or none for host memory",
                               *mmdev),
                   ExitCode::usage};
    }
    out.projector_device = *mmdev;
  }
  return out;
}

Expected<std::vector<GpuBudget>> gpu_budgets(const gpu::GpuReport& devices,
                                             const gpu::NvmlReport& nvml,
                                             const std::vector<std::string>& selected,
                                             std::uint64_t reserve) {
  std::vector<GpuBudget> all;
  if (devices.status != gpu::GpuStatus::available) {
    return all;
  }
  for (const gpu::GpuDevice& device : devices.devices) {
    if (device.integrated) {
      return std::vector<GpuBudget>{};  // one pool (K19)
    }
    GpuBudget budget;
    budget.name = fmt::format("CUDA{}", device.index);
    budget.description = device.name;
    budget.reserve_bytes = reserve;
    budget.pci_bus_id = device.pci_bus_id;
    for (const gpu::GpuMemory& memory : nvml.memory) {
      if (!device.pci_bus_id.empty() && memory.pci_bus_id == device.pci_bus_id) {
        budget.free_bytes = memory.free_bytes;
        budget.total_bytes = memory.total_bytes;
      }
    }
    all.push_back(std::move(budget));
  }
  if (selected.empty()) {
    return all;
  }
  std::vector<GpuBudget> chosen;
  for (const std::string& name : selected) {
    if (name == "none") {
      continue;
    }
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const GpuBudget& b) { return b.name == name; });
    if (it == all.end()) {
      return Error{fmt::format("--device {}: no such GPU here (llama.cpp names them CUDA0 … "
                               "CUDA{}); `llama-server --list-devices` shows them",
                               name, all.empty() ? 0 : all.size() - 1),
                   ExitCode::usage};
    }
    chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace gb10tune::plan
