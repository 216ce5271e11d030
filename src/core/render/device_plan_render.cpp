#include "device_plan_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::render::detail {

using nlohmann::json;

std::string signed_gib(std::int64_t bytes) {
  return fmt::format("{}{:.2f} GiB", bytes < 0 ? "-" : "+",
                     static_cast<double>(bytes < 0 ? -bytes : bytes) / 1073741824.0);
}

std::string where_text(const std::vector<std::uint32_t>& layers, bool output) {
  return fmt::format("layers {}{}", index_ranges(layers), output ? " + output" : "");
}

json device_part_json(const plan::DevicePart& g) {
  return {{"name", g.name},
          {"description", g.description},
          {"pci_bus_id", g.pci_bus_id.empty() ? json(nullptr) : json(g.pci_bus_id)},
          {"layers", g.layers},
          {"output_layer", g.output_layer},
          {"weights_bytes", g.weights_bytes},
          {"cache_bytes", g.cache_bytes},
          {"compute_bytes", g.compute_bytes},
          {"runtime_bytes", g.runtime_bytes},
          {"service_bytes", g.service_bytes},
          {"projector_bytes", g.projector_bytes},
          {"total_bytes", g.total_bytes},
          {"free_bytes", g.free_bytes ? json(*g.free_bytes) : json(nullptr)},
          {"reserve_bytes", g.reserve_bytes},
          {"available_bytes", g.available_bytes ? json(*g.available_bytes) : json(nullptr)},
          {"margin_bytes", g.margin_bytes ? json(*g.margin_bytes) : json(nullptr)},
          {"fits", g.fits}};
}

json devices_json(const plan::DevicePlan& d) {
  json gpus = json::array();
  for (const plan::DevicePart& g : d.gpus) {
    gpus.push_back(device_part_json(g));
  }
  const plan::HostPart& h = d.host;
  json doc = {{"gpu_layers", d.gpu_layers},
              {"layer_count", d.layer_count},
              {"gpus", gpus},
              {"host",
               {{"layers", h.layers},
                {"output_layer", h.output_layer},
                {"weights_bytes", h.weights_bytes},
                {"mapped_extra_bytes", h.mapped_extra_bytes},
                {"repack_bytes", h.repack_bytes},
                {"cache_bytes", h.cache_bytes},
                {"buffers_bytes", h.buffers_bytes},
                {"projector_bytes", h.projector_bytes},
                {"runtime_bytes", h.runtime_bytes},
                {"service_bytes", h.service_bytes},
                {"cache_ram_bytes", h.cache_ram_bytes},
                {"overhead_bytes", h.overhead_bytes},
                {"calibration_bytes", h.calibration_bytes},
                {"total_bytes", h.total_bytes},
                {"available_bytes", h.available_bytes ? json(*h.available_bytes) : json(nullptr)},
                {"margin_bytes", h.margin_bytes ? json(*h.margin_bytes) : json(nullptr)},
                {"fits", h.fits}}},
              {"budgets_known", d.budgets_known},
              {"fits", d.fits},
              {"tightest", d.tightest.empty() ? json(nullptr) : json(d.tightest)}};
  doc["max_gpu_layers_that_fit"] =
      d.max_gpu_layers_that_fit ? json(*d.max_gpu_layers_that_fit) : json(nullptr);
  return doc;
}

// One line of the per-device table: part, where, total, budget, margin.
std::string part_line(std::string_view name, const std::string& where, std::uint64_t total,
                      std::optional<std::uint64_t> available, std::optional<std::int64_t> margin,
                      bool fits, std::string_view budget_label, const TextStyle& style) {
  const auto mib = [](std::uint64_t b) { return static_cast<double>(b) / 1048576.0; };
  std::string verdict;
  if (!available) {
    verdict = style.yellow("⚠ budget unknown: not checked");
  } else {
    const std::string m = signed_gib(*margin);
    verdict = fits ? style.green(m + "  fits") : style.red(m + "  DOES NOT FIT");
  }
  return fmt::format("  {:<8}{:>12} of {:>12} {:<28}{}\n    {}\n", name,
                     fmt::format("{:.2f} MiB", mib(total)),
                     available ? fmt::format("{:.2f} MiB", mib(*available)) : std::string("?"),
                     budget_label, verdict, where);
}

// What one GPU holds, in words: its layers and buffers, the projector alone, or (-ngl 0) the
// CPU layers' offloaded ops alone.
std::string gpu_where(const plan::DevicePart& g) {
  const auto mib = [](std::uint64_t b) { return static_cast<double>(b) / 1048576.0; };
  const std::string description = g.description.empty() ? std::string("not seen") : g.description;
  if (g.layers.empty() && !g.output_layer && g.projector_bytes > 0 && g.compute_bytes == 0) {
    return fmt::format("the projector only ({}): mmproj {:.2f} + CUDA runtime {:.2f} MiB",
                       description, mib(g.projector_bytes), mib(g.runtime_bytes));
  }
  if (g.layers.empty() && !g.output_layer && g.compute_bytes == 0) {
    return "no layers";
  }
  const std::string layers = g.layers.empty() && !g.output_layer
                                 ? std::string("no layers, the CPU layers' big batches")
                                 : where_text(g.layers, g.output_layer);
  return fmt::format(
      "{} ({}): weights {:.2f} + KV/state {:.2f} + compute {:.2f} + CUDA runtime {:.2f}{} MiB",
      layers, g.description, mib(g.weights_bytes), mib(g.cache_bytes), mib(g.compute_bytes),
      mib(g.runtime_bytes),
      g.projector_bytes > 0 ? fmt::format(" + mmproj {:.2f}", mib(g.projector_bytes))
                            : std::string());
}

std::string devices_text(const plan::DevicePlan& d, const TextStyle& style) {
  const auto mib = [](std::uint64_t b) { return static_cast<double>(b) / 1048576.0; };
  std::string out = fmt::format(
      "\n{} — -ngl {} of {} layers (the last is the output layer); device buffers against "
      "each GPU's free memory, host buffers against MemAvailable\n",
      style.bold("per device"), d.gpu_layers, d.layer_count);
  for (const plan::DevicePart& g : d.gpus) {
    const std::string where = gpu_where(g);
    out += part_line(g.name, where, g.total_bytes, g.available_bytes, g.margin_bytes, g.fits,
                     "(free − GPU reserve)", style);
  }
  const plan::HostPart& h = d.host;
  out += part_line(
      "host",
      fmt::format("token embedding + {}: weights {:.2f}{}{} + KV/state {:.2f} + pinned compute "
                  "and output {:.2f}{} + runtime {:.2f} + prompt cache {:.2f} + margin {:.2f} MiB",
                  h.layers.empty() && !h.output_layer ? std::string("no layers")
                                                      : where_text(h.layers, h.output_layer),
                  mib(h.weights_bytes),
                  h.mapped_extra_bytes > 0
                      ? fmt::format(" + offloaded tensors in the mapped range {:.2f}",
                                    mib(h.mapped_extra_bytes))
                      : std::string(),
                  h.repack_bytes > 0 ? fmt::format(" + CPU repack {:.2f}", mib(h.repack_bytes))
                                     : std::string(),
                  mib(h.cache_bytes), mib(h.buffers_bytes),
                  h.projector_bytes > 0 ? fmt::format(" + mmproj {:.2f}", mib(h.projector_bytes))
                                        : std::string(),
                  mib(h.runtime_bytes), mib(h.cache_ram_bytes), mib(h.overhead_bytes)),
      h.total_bytes, h.available_bytes, h.margin_bytes, h.fits, "(MemAvailable − reserve)", style);
  if (!d.tightest.empty()) {
    out += fmt::format("  tightest: {}\n", d.tightest);
  }
  return out;
}

}  // namespace gb10tune::render::detail
