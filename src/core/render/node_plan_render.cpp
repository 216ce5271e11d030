#include "gb10tune/render/node_plan_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device_plan_render.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

using nlohmann::json;

namespace {

double node_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / 1048576.0;
}

std::string node_where(const rpc::NodePart& n) {
  std::vector<std::string> parts;
  if (n.input_layer) {
    parts.emplace_back("token embedding");
  }
  if (!n.layers.empty()) {
    parts.push_back("layers " + index_ranges(n.layers));
  }
  if (n.output_layer) {
    parts.emplace_back("output layer");
  }
  return parts.empty() ? std::string("no layers") : fmt::format("{}", fmt::join(parts, " + "));
}

json node_optional_json(const std::optional<std::uint64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string gpu_where(const plan::DevicePart& g) {
  std::vector<std::string> parts;
  if (!g.layers.empty()) {
    parts.push_back("layers " + index_ranges(g.layers));
  }
  if (g.output_layer) {
    parts.emplace_back("output layer");
  }
  if (g.projector_bytes > 0) {
    parts.emplace_back("projector");
  }
  return parts.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(parts, " + "));
}

json head_gpus_json(const std::vector<plan::DevicePart>& gpus) {
  json out = json::array();
  for (const plan::DevicePart& g : gpus) {
    out.push_back(detail::device_part_json(g));
  }
  return out;
}

// "+1.25 GiB  fits", "-0.50 GiB  DOES NOT FIT", or that the budget is unknown.
std::string margin_verdict(const std::optional<std::uint64_t>& available,
                           const std::optional<std::int64_t>& margin, bool fits,
                           const TextStyle& style) {
  if (!available || !margin) {
    return style.yellow("⚠ budget unknown: not checked");
  }
  const std::string text = detail::signed_gib(*margin);
  return fits ? style.green(text + "  fits") : style.red(text + "  DOES NOT FIT");
}

// A head's discrete GPU: its part against its own free memory.
std::string render_head_gpu(const plan::DevicePart& g, const TextStyle& style) {
  std::string out = fmt::format(
      "  {:<22}{:>12} of {:>12} {:<26}{}\n", "head " + g.name,
      fmt::format("{:.2f} MiB", node_mib(g.total_bytes)),
      g.available_bytes ? fmt::format("{:.2f} MiB", node_mib(*g.available_bytes))
                        : std::string("?"),
      "(free − reserve)", margin_verdict(g.available_bytes, g.margin_bytes, g.fits, style));
  out += fmt::format(
      "    {} on {}{}: weights {:.2f} + KV/state {:.2f} + compute {:.2f} + CUDA context {:.2f}{} "
      "MiB\n",
      gpu_where(g), g.name, g.description.empty() ? "" : " (" + g.description + ")",
      node_mib(g.weights_bytes), node_mib(g.cache_bytes), node_mib(g.compute_bytes),
      node_mib(g.runtime_bytes),
      g.projector_bytes > 0 ? fmt::format(" + projector {:.2f}", node_mib(g.projector_bytes))
                            : std::string());
  return out;
}

}  // namespace

json rpc_to_json(const RpcPreview& rpc) {
  json workers = json::array();
  for (std::size_t i = 0; i < rpc.workers.size(); ++i) {
    const rpc::WorkerInfo& w = rpc.workers[i];
    json devices = json::array();
    for (const rpc::DeviceMemory& d : w.devices) {
      devices.push_back({{"free_bytes", d.free_bytes}, {"total_bytes", d.total_bytes}});
    }
    workers.push_back(
        {{"endpoint", w.endpoint.to_string()},
         {"protocol_version", w.version.to_string()},
         {"devices", devices},
         {"argv", i < rpc.worker_argv.size() ? json(rpc.worker_argv[i]) : json(nullptr)},
         {"start", i < rpc.worker_start.size() ? json(rpc.worker_start[i]) : json(nullptr)}});
  }
  json nodes = json::array();
  for (const rpc::NodePart& n : rpc.nodes.nodes) {
    nodes.push_back({{"node", n.node},
                     {"devices", n.devices},
                     {"layers", n.layers},
                     {"input_layer", n.input_layer},
                     {"output_layer", n.output_layer},
                     {"weights_bytes", n.weights_bytes},
                     {"cache_bytes", n.cache_bytes},
                     {"compute_bytes", n.compute_bytes},
                     {"runtime_bytes", n.runtime_bytes},
                     {"host_bytes", n.host_bytes},
                     {"total_bytes", n.total_bytes},
                     {"buffer_bytes", n.buffer_bytes},
                     {"load_bytes", n.load_bytes},
                     {"free_bytes", node_optional_json(n.free_bytes)},
                     {"free_is_total", n.free_is_total},
                     {"reserve_bytes", n.reserve_bytes},
                     {"available_bytes", node_optional_json(n.available_bytes)},
                     {"margin_bytes", n.margin_bytes ? json(*n.margin_bytes) : json(nullptr)},
                     {"fits", n.fits},
                     {"gpus", head_gpus_json(n.gpus)}});
  }
  return {{"head_protocol_version", rpc.head_version.to_string()},
          {"workers", workers},
          {"gpu_layers", rpc.nodes.gpu_layers},
          {"layer_count", rpc.nodes.layer_count},
          {"nodes", nodes},
          {"total_bytes", rpc.nodes.total_bytes},
          {"available_bytes",
           rpc.nodes.budgets_known ? json(rpc.nodes.available_bytes) : json(nullptr)},
          {"budgets_known", rpc.nodes.budgets_known},
          {"fits", rpc.nodes.fits},
          {"tightest", rpc.nodes.tightest.empty() ? json(nullptr) : json(rpc.nodes.tightest)}};
}

std::string render_rpc_text(const RpcPreview& rpc, const TextStyle& style) {
  std::string out = fmt::format(
      "\n{} — -ngl {} of {} layers over {} worker(s) and the head (RPC devices first, as "
      "llama.cpp orders them); each node against its own memory\n",
      style.bold("per node (RPC)"), rpc.nodes.gpu_layers, rpc.nodes.layer_count,
      rpc.workers.size());
  for (const rpc::NodePart& n : rpc.nodes.nodes) {
    // A head with discrete GPUs: its line is its host memory, each GPU has its own.
    const bool host_only = !n.gpus.empty();
    const std::string verdict =
        margin_verdict(n.available_bytes, n.margin_bytes,
                       host_only ? n.margin_bytes && *n.margin_bytes >= 0 : n.fits, style);
    const bool head = n.node == "head";
    out += fmt::format("  {:<22}{:>12} of {:>12} {:<26}{}\n", n.node,
                       fmt::format("{:.2f} MiB", node_mib(n.total_bytes)),
                       n.available_bytes ? fmt::format("{:.2f} MiB", node_mib(*n.available_bytes))
                                         : std::string("?"),
                       head ? "(MemAvailable − reserve)" : "(free − reserve)", verdict);
    out += fmt::format(
        "    {} on {}: weights {:.2f} + KV/state {:.2f} + compute {:.2f} + {} {:.2f}{} MiB\n",
        node_where(n), host_only ? "CPU" : fmt::format("{}", fmt::join(n.devices, ", ")),
        node_mib(n.weights_bytes), node_mib(n.cache_bytes), node_mib(n.compute_bytes),
        head ? "llama-server" : "rpc-server", node_mib(n.runtime_bytes),
        head ? fmt::format(" + output, prompt cache, margin {:.2f}", node_mib(n.host_bytes))
             : std::string());
    if (n.free_is_total) {
      out += "    " + style.yellow("note:") +
             " a CPU worker reports its whole memory as free; its budget is its total memory, "
             "less what else runs there\n";
    }
    for (const plan::DevicePart& g : n.gpus) {
      out += render_head_gpu(g, style);
    }
  }
  if (rpc.nodes.budgets_known) {
    out += fmt::format("  {:<22}{:>12} of {:>12}\n", "all nodes",
                       fmt::format("{:.2f} MiB", node_mib(rpc.nodes.total_bytes)),
                       fmt::format("{:.2f} MiB", node_mib(rpc.nodes.available_bytes)));
  }
  if (!rpc.nodes.tightest.empty()) {
    out += fmt::format("  tightest: {}\n", rpc.nodes.tightest);
  }
  out += '\n' + style.bold("workers") +
         fmt::format(" (RPC protocol {} on the head)\n", rpc.head_version.to_string());
  for (std::size_t i = 0; i < rpc.workers.size(); ++i) {
    const rpc::WorkerInfo& w = rpc.workers[i];
    out += fmt::format("  {}: protocol {}, {} device(s), {:.2f} MiB free of {:.2f} MiB\n",
                       w.endpoint.to_string(), w.version.to_string(), w.devices.size(),
                       node_mib(w.free_bytes()), node_mib(w.total_bytes()));
    if (i < rpc.worker_start.size()) {
      out += "    on that machine: " + rpc.worker_start[i] + '\n';
    }
    if (i < rpc.worker_argv.size()) {
      out += "    or by hand:      env -u GGML_CUDA_ENABLE_UNIFIED_MEMORY " +
             shell_join(rpc.worker_argv[i]) + '\n';
    }
  }
  return out;
}

std::string rpc_refusal(const rpc::NodePlan& nodes) {
  std::string out;
  for (const rpc::NodePart& n : nodes.nodes) {
    for (const plan::DevicePart& g : n.gpus) {
      if (g.fits || !g.available_bytes || !g.free_bytes) {
        continue;
      }
      out += fmt::format(
          "the head's {} needs {:.2f} MiB ({}: weights {:.2f} + KV/state {:.2f} + compute {:.2f} "
          "+ CUDA context {:.2f} MiB …) but has {:.2f} MiB (free {:.2f} − reserve {:.2f} MiB). ",
          g.name, node_mib(g.total_bytes), gpu_where(g), node_mib(g.weights_bytes),
          node_mib(g.cache_bytes), node_mib(g.compute_bytes), node_mib(g.runtime_bytes),
          node_mib(*g.available_bytes), node_mib(*g.free_bytes), node_mib(g.reserve_bytes));
    }
    const bool host_fits = n.margin_bytes && *n.margin_bytes >= 0;
    if (host_fits || !n.available_bytes) {
      continue;
    }
    out += fmt::format(
        "{} {} needs {:.2f} MiB ({}: weights {:.2f} + KV/state {:.2f} + compute {:.2f} MiB …) "
        "but has {:.2f} MiB ({} {:.2f} − reserve {:.2f} MiB). ",
        n.node == "head" ? "the head" : "RPC worker", n.node == "head" ? "(this machine)" : n.node,
        node_mib(n.total_bytes), node_where(n), node_mib(n.weights_bytes), node_mib(n.cache_bytes),
        node_mib(n.compute_bytes), node_mib(*n.available_bytes),
        n.node == "head" ? "MemAvailable" : "free", node_mib(*n.free_bytes),
        node_mib(n.reserve_bytes));
  }
  if (nodes.available_bytes >= nodes.total_bytes) {
    out += fmt::format(
        "The nodes together have {:.2f} MiB for {:.2f} MiB: the split, not the sum, is short. "
        "Move layers off that node with -- --tensor-split (one share per device, RPC devices "
        "first, e.g. -ts 3,1), or lower the context or slots",
        node_mib(nodes.available_bytes), node_mib(nodes.total_bytes));
  } else {
    out += fmt::format(
        "The nodes together have {:.2f} MiB for {:.2f} MiB: lower the context or slots, use a "
        "smaller quantization, or add a worker",
        node_mib(nodes.available_bytes), node_mib(nodes.total_bytes));
  }
  return out;
}

}  // namespace gb10tune::render
