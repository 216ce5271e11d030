#include "gb10tune/render/plan_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "device_plan_render.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

using detail::devices_json;
using detail::devices_text;
using detail::signed_gib;
using detail::where_text;
using nlohmann::json;

namespace {

std::string type_name(gguf::GgmlType type) {
  return std::string(gguf::ggml_type_info(type).name);
}

// "36.00 GiB (38654705664 bytes)": binary units match llama.cpp's own log lines.
std::string bytes_cell(std::uint64_t bytes) {
  return fmt::format("{:>12}  {:>16} B",
                     fmt::format("{:.2f} MiB", static_cast<double>(bytes) / 1048576.0),
                     fmt::format("{}", bytes));
}

json buffers_json(const plan::ContextBuffers& buffers) {
  return {{"compute_host_bytes", buffers.compute_host},
          {"compute_device_bytes", buffers.compute_device},
          {"output_bytes", buffers.output},
          {"peak_phase", buffers.peak_phase}};
}

// "CPU 123.45 MiB (attention scores (KQ))" or "CUDA0 … + CUDA_Host …".
std::string buffers_detail(const plan::ContextBuffers& buffers, plan::PlanBackend backend) {
  const auto mib = [](std::uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; };
  if (backend == plan::PlanBackend::cuda) {
    return fmt::format("CUDA0 {:.2f} + CUDA_Host {:.2f} MiB, peak: {}", mib(buffers.compute_device),
                       mib(buffers.compute_host), buffers.peak_phase);
  }
  return fmt::format("CPU {:.2f} MiB, peak: {}", mib(buffers.compute_host), buffers.peak_phase);
}

std::string_view evidence_name(plan::RepackEvidence evidence) {
  switch (evidence) {
    case plan::RepackEvidence::build:
      return "build";
    case plan::RepackEvidence::cpu:
      return "cpu";
    case plan::RepackEvidence::unknown:
      break;
  }
  return "unknown";
}

json repack_json(const plan::RepackPlan& repack, const plan::RepackSetting& setting) {
  json types = json::array();
  for (const plan::RepackTypeShare& share : repack.types) {
    types.push_back(
        {{"type", type_name(share.type)}, {"tensors", share.tensors}, {"bytes", share.bytes}});
  }
  return {{"applies", repack.applies},
          {"assumed", repack.assumed},
          {"buffer_bytes", repack.buffer_bytes},
          {"released_bytes", repack.released_bytes},
          {"types", types},
          {"evidence", evidence_name(setting.features.evidence)},
          {"features", setting.features.names},
          {"enabled", setting.enabled},
          {"mmap", setting.mmap},
          {"basis", repack.basis}};
}

// "CPU_REPACK: q4_0 x112 380.25 MiB, q4_K x1 8.00 MiB; the build's CPU features (…) repack …".
std::string repack_detail(const plan::RepackPlan& repack) {
  std::vector<std::string> parts;
  for (const plan::RepackTypeShare& share : repack.types) {
    parts.push_back(fmt::format("{} x{} {:.2f} MiB", type_name(share.type), share.tensors,
                                static_cast<double>(share.bytes) / 1048576.0));
  }
  return fmt::format("CPU_REPACK: {}; {}", fmt::join(parts, ", "), repack.basis);
}

// One row of the plan's table: label, bytes, what they are.
void add_plan_row(std::string& out, std::string_view label, std::uint64_t bytes,
                  std::string_view detail) {
  out += fmt::format("  {:<24}{}  {}\n", label, bytes_cell(bytes), detail);
}

// The table of a plan that is an estimate (launch --force --overhead on an architecture without
// layer rules): said first, and the caches shown as unknown rather than as 0.
void add_estimate_rows(std::string& out, const model::ModelFacts& model,
                       const plan::MemoryPlan& plan, const TextStyle& style) {
  const auto row = [&out](std::string_view label, std::uint64_t bytes, std::string_view detail) {
    add_plan_row(out, label, bytes, detail);
  };
  out += fmt::format("{}: {}\n\n", style.bold("ESTIMATE, not a plan"), model.unsupported_reason);
  row("weights", plan.weights_bytes, "the file's tensor sizes");
  if (plan.repack_bytes > 0) {
    row("CPU repack", plan.repack_bytes, repack_detail(plan.repack));
  }
  if (plan.projector_bytes > 0) {
    row("mmproj weights", plan.projector_bytes, "the projector's tensors");
  }
  const std::string unknown = fmt::format("{:>12}  {:>16}  ", "unknown", "");
  for (const char* label : {"KV cache", "recurrent state", "compute buffers", "output buffers"}) {
    out += fmt::format("  {:<24}{}{}\n", label, unknown, "not modelled: covered by --overhead");
  }
  row("runtime", plan.runtime_bytes, "the llama-server process itself (measured)");
  row("margin (--overhead)", plan.overhead_bytes, "yours: everything the plan does not know");
  row("prompt cache (RAM)", plan.cache_ram_bytes, "(--cache-ram limit)");
  out += fmt::format("  {:<24}{}\n", "total (estimate)", bytes_cell(plan.total_bytes));
  if (plan.available_bytes) {
    out += fmt::format("  available {}: the estimate {} (its KV and buffers unchecked)\n",
                       format_bytes(*plan.available_bytes), plan.fits ? "fits" : "does not fit");
  }
  for (const auto& note : plan.notes) {
    out += "  note: " + note + "\n";
  }
}

// The rows of the weights: the model's, the CPU's repacked copy, the projector's.
void add_weight_rows(std::string& out, const model::ModelFacts& model,
                     const plan::PlanConfig& config, const plan::MemoryPlan& plan) {
  const auto row = [&out](std::string_view label, std::uint64_t bytes, std::string_view detail) {
    add_plan_row(out, label, bytes, detail);
  };
  std::string weights_note =
      config.mtp || model.mtp_weight_bytes == 0 ? "" : "(MTP blocks not loaded)";
  if (model.unloaded_weight_bytes > 0) {
    weights_note += fmt::format(
        "{}(without the nextn block{} llama.cpp skips: {})", weights_note.empty() ? "" : " ",
        model.unloaded_block_count == 1 ? "" : "s", format_bytes(model.unloaded_weight_bytes));
  }
  if (plan.repack.released_bytes > 0) {
    weights_note += fmt::format(
        "{}(without {} of repacked originals: {})", weights_note.empty() ? "" : " ",
        format_bytes(plan.repack.released_bytes),
        config.repack.mmap ? "outside the mapped range, unmapped" : "loaded without mmap");
  }
  row("weights", plan.weights_bytes, weights_note);
  if (plan.repack_bytes > 0) {
    row(plan.repack.assumed ? "CPU repack (assumed)" : "CPU repack", plan.repack_bytes,
        repack_detail(plan.repack));
  }
  if (plan.projector) {
    const plan::ProjectorPlan& mm = *plan.projector;
    const std::string where = mm.device;
    row("mmproj weights", mm.weights_bytes,
        fmt::format("{}, the projector's tensors ({})", where,
                    config.projector && !config.projector->projector_type.empty()
                        ? config.projector->projector_type
                        : std::string("type not set")));
    row("mmproj compute", mm.compute_bytes,
        mm.patches == 0 ? where + ", " + mm.basis
                        : fmt::format("{}, one {}x{} image ({} patches), peak: {}{}", where,
                                      mm.warmup_side, mm.warmup_side, mm.patches, mm.peak_phase,
                                      mm.checked ? "" : " (estimated)"));
    if (mm.host_compute_bytes > 0) {
      row("mmproj input image", mm.host_compute_bytes,
          fmt::format("host memory, clip's CPU buffer: the {}x{} f32 image", mm.warmup_side,
                      mm.warmup_side));
    }
  }
}

// The rows of the caches: KV of each kind, recurrent state, the MTP draft context's KV.
void add_cache_rows(std::string& out, const model::ModelFacts& model,
                    const plan::PlanConfig& config, const plan::MemoryPlan& plan) {
  const auto row = [&out](std::string_view label, std::uint64_t bytes, std::string_view detail) {
    add_plan_row(out, label, bytes, detail);
  };
  row("KV, full attention", plan.kv_full_bytes,
      fmt::format("{} layers x {} cells x {} stream(s)",
                  model.kv_layer_count(model::KvScope::full_attention), plan.full_cells,
                  plan.streams));
  if (model.kv_layer_count(model::KvScope::sliding_window) > 0) {
    row("KV, sliding window", plan.kv_swa_bytes,
        fmt::format("{} layers x {} cells (window {})",
                    model.kv_layer_count(model::KvScope::sliding_window), plan.swa_cells,
                    model.sliding_window));
  }
  if (model.recurrent_layer_count > 0) {
    row("recurrent state", plan.recurrent_bytes,
        fmt::format("{} layers x {} rows{}", model.recurrent_layer_count, plan.recurrent_rows,
                    config.mtp ? fmt::format(" (slots x (1 + draft n-max {}))", config.draft_n_max)
                               : std::string()));
  }
  if (config.mtp) {
    row("MTP draft context KV", plan.mtp_kv_bytes,
        fmt::format("{} layer(s), {}/{}", model.kv_layer_count(model::KvScope::mtp),
                    type_name(config.draft_cache_k), type_name(config.draft_cache_v)));
  }
}

// The rows of the buffers, the runtime, the margins and the calibration.
void add_buffer_rows(std::string& out, const plan::PlanConfig& config,
                     const plan::MemoryPlan& plan) {
  const auto row = [&out](std::string_view label, std::uint64_t bytes, std::string_view detail) {
    add_plan_row(out, label, bytes, detail);
  };
  row("compute buffers", plan.buffers.main.compute(),
      "main context: " + buffers_detail(plan.buffers.main, config.backend));
  if (config.mtp) {
    row("compute, MTP draft", plan.buffers.mtp.compute(),
        "draft context: " + buffers_detail(plan.buffers.mtp, config.backend));
  }
  row("output buffers", plan.output_bytes, "logits (and MTP hidden states), host memory");
  row("runtime", plan.runtime_bytes,
      config.backend == plan::PlanBackend::cuda
          ? fmt::format("process + CUDA: host {:.0f} MiB, device {:.0f} MiB (K22, measured)",
                        static_cast<double>(plan.runtime.host) / 1048576.0,
                        static_cast<double>(plan.runtime.device) / 1048576.0)
          : std::string("the llama-server process itself (measured)"));
  row("margin (--overhead)", plan.overhead_bytes, "explicit extra margin");
  row("prompt cache (RAM)", plan.cache_ram_bytes, "(--cache-ram limit)");
  if (plan.calibration_bytes != 0 || !plan.calibration_source.empty()) {
    out += fmt::format(
        "  {:<24}{:>12}  {:>16} B  learned: {}\n", "calibration",
        fmt::format("{:+.2f} MiB", static_cast<double>(plan.calibration_bytes) / 1048576.0),
        fmt::format("{:+}", plan.calibration_bytes), plan.calibration_source);
  }
}

// The total and the verdict: per device, against MemAvailable, per node, or unchecked.
void add_plan_verdict(std::string& out, const plan::PlanConfig& config,
                      const plan::MemoryPlan& plan, const TextStyle& style) {
  out += fmt::format("  {:<24}{}\n", style.bold("total"), bytes_cell(plan.total_bytes));
  if (plan.devices) {
    out += devices_text(*plan.devices, style);
    if (!plan.devices->budgets_known) {
      out += "  " + style.yellow("⚠") + " a budget is unknown: the plan is not checked\n";
    } else if (!plan.fits) {
      out += "  " + style.red("DOES NOT FIT") + "\n\n" + what_fits(config, plan) + "\n";
    }
  } else if (plan.available_bytes) {
    out += fmt::format("  {:<24}{}  MemAvailable minus the reserve\n", "available",
                       bytes_cell(*plan.available_bytes));
    const std::string margin = signed_gib(*plan.margin_bytes);
    out += fmt::format(
        "  {:<24}{}\n", "margin",
        plan.fits ? style.green(margin + "  fits") : style.red(margin + "  DOES NOT FIT"));
    if (!plan.fits) {
      out += "\n" + what_fits(config, plan) + "\n";
    }
  } else if (plan.per_node) {
    out += "  available               per node, below\n";
  } else {
    out += "  available               unknown (/proc/meminfo unreadable): not checked\n";
  }
}

}  // namespace

json plan_to_json(const model::ModelFacts& model, const plan::PlanConfig& config,
                  const plan::MemoryPlan& plan) {
  json doc = make_document("launch");
  doc["dry_run"] = true;
  doc["model"] = {{"path", model.source},
                  {"architecture", model.architecture},
                  {"name", model.name},
                  {"context_length", model.context_length},
                  {"block_count", model.block_count},
                  {"main_layer_count", model.main_layer_count},
                  {"mtp_layer_count", model.mtp_layer_count},
                  {"kv_layers_full", model.kv_layer_count(model::KvScope::full_attention)},
                  {"kv_layers_swa", model.kv_layer_count(model::KvScope::sliding_window)},
                  {"kv_layers_mtp", model.kv_layer_count(model::KvScope::mtp)},
                  {"sliding_window", model.sliding_window},
                  {"recurrent_layer_count", model.recurrent_layer_count},
                  {"recurrent_bytes_per_sequence", model.recurrent_bytes_per_sequence},
                  {"weight_bytes", model.weight_bytes},
                  {"mtp_weight_bytes", model.mtp_weight_bytes},
                  {"unloaded_weight_bytes", model.unloaded_weight_bytes},
                  {"parameter_count", model.parameter_count},
                  {"expert_count", model.expert_count},
                  {"expert_used_count", model.expert_used_count},
                  {"bytes_read_per_token", model.bytes_read_per_token}};
  doc["config"] = {{"ctx_total", config.ctx_total},
                   {"slots", config.slots},
                   {"kv_unified", config.kv_unified},
                   {"cache_type_k", type_name(config.cache_k)},
                   {"cache_type_v", type_name(config.cache_v)},
                   {"flash_attention", config.flash_attention},
                   {"swa_full", config.swa_full},
                   {"ubatch", config.ubatch},
                   {"batch", config.batch},
                   {"backend", plan::backend_name(config.backend)},
                   {"backend_reason", config.backend_reason},
                   {"mtp", config.mtp},
                   {"draft_n_max", config.draft_n_max},
                   {"cache_type_k_draft", type_name(config.draft_cache_k)},
                   {"cache_type_v_draft", type_name(config.draft_cache_v)},
                   {"cache_ram_bytes", config.cache_ram_bytes},
                   {"mmproj_offload", config.projector_offload},
                   {"overhead_bytes", config.overhead_bytes}};
  json figures{
      {"n_ctx", plan.n_ctx},
      {"ctx_per_slot", plan.ctx_per_slot},
      {"streams", plan.streams},
      {"full_cells", plan.full_cells},
      {"swa_cells", plan.swa_cells},
      {"recurrent_rows", plan.recurrent_rows},
      {"weights_bytes", plan.weights_bytes},
      {"repack_bytes", plan.repack_bytes},
      {"repack", repack_json(plan.repack, config.repack)},
      {"projector_bytes", plan.projector_bytes},
      {"projector_compute_bytes", plan.projector_compute_bytes},
      {"kv_full_bytes", plan.kv_full_bytes},
      {"kv_swa_bytes", plan.kv_swa_bytes},
      {"recurrent_bytes", plan.recurrent_bytes},
      {"mtp_kv_bytes", plan.mtp_kv_bytes},
      {"compute_bytes", plan.compute_bytes},
      {"output_bytes", plan.output_bytes},
      {"runtime_bytes", plan.runtime_bytes},
      {"runtime_host_bytes", plan.runtime.host},
      {"runtime_device_bytes", plan.runtime.device},
      {"overhead_bytes", plan.overhead_bytes},
      {"calibration_bytes", plan.calibration_bytes},
      {"calibration_source",
       plan.calibration_source.empty() ? json(nullptr) : json(plan.calibration_source)},
      {"load_bytes", plan.load_bytes()},
      {"buffers",
       {{"main", buffers_json(plan.buffers.main)}, {"mtp", buffers_json(plan.buffers.mtp)}}},
      {"cache_ram_bytes", plan.cache_ram_bytes},
      {"total_bytes", plan.total_bytes},
      {"fits", plan.fits},
      {"notes", plan.notes}};
  figures["available_bytes"] = plan.available_bytes ? json(*plan.available_bytes) : json(nullptr);
  figures["margin_bytes"] = plan.margin_bytes ? json(*plan.margin_bytes) : json(nullptr);
  if (plan.available_bytes && !plan.fits) {
    figures["max_slots_that_fit"] = plan.max_slots_that_fit;
    figures["max_ctx_per_slot_that_fits"] = plan.max_ctx_per_slot_that_fits;
  }
  if (plan.projector) {
    const plan::ProjectorPlan& mm = *plan.projector;
    figures["projector"] = {
        {"type", config.projector ? config.projector->projector_type : std::string()},
        {"weights_bytes", mm.weights_bytes},
        {"compute_bytes", mm.compute_bytes},
        {"host_compute_bytes", mm.host_compute_bytes},
        {"buffer", mm.device},
        {"on_device", mm.on_device},
        {"warmup_image_side", mm.warmup_side},
        {"patches", mm.patches},
        {"peak_phase", mm.peak_phase},
        {"checked", mm.checked},
        {"basis", mm.basis}};
  } else {
    figures["projector"] = nullptr;
  }
  figures["devices"] = plan.devices ? devices_json(*plan.devices) : json(nullptr);
  figures["estimate"] = plan.estimate;
  if (plan.estimate) {
    // Unknown, not zero: the architecture has no layer rules (launch --force --overhead).
    for (const char* name : {"kv_full_bytes", "kv_swa_bytes", "recurrent_bytes", "mtp_kv_bytes",
                             "compute_bytes", "output_bytes", "projector_compute_bytes"}) {
      figures[name] = nullptr;
    }
    figures["buffers"] = nullptr;
    doc["model"]["supported"] = false;
    doc["model"]["unsupported_reason"] = model.unsupported_reason;
  }
  doc["plan"] = figures;
  return doc;
}

std::string render_plan_text(const model::ModelFacts& model, const plan::PlanConfig& config,
                             const plan::MemoryPlan& plan, const TextStyle& style) {
  std::string out = fmt::format("{} — {} ({}{})\n", style.bold("memory plan"), model.source,
                                model.architecture, model.name.empty() ? "" : ", " + model.name);
  out += fmt::format("backend {}: {}\n", plan::backend_name(config.backend),
                     config.backend_reason.empty() ? "as configured" : config.backend_reason);
  out += fmt::format(
      "context {} cells in {} stream{}{}; {} slot{}, up to {} cells each; KV {}/{}{}\n\n",
      plan.n_ctx, plan.streams, plan.streams == 1 ? "" : "s",
      config.kv_unified ? " (unified pool, -kvu)" : "", config.slots, config.slots == 1 ? "" : "s",
      plan.ctx_per_slot, type_name(config.cache_k), type_name(config.cache_v),
      config.flash_attention ? ", flash attention" : "");
  if (plan.estimate) {
    add_estimate_rows(out, model, plan, style);
    return out;
  }
  add_weight_rows(out, model, config, plan);
  add_cache_rows(out, model, config, plan);
  add_buffer_rows(out, config, plan);
  add_plan_verdict(out, config, plan, style);
  for (const std::string& note : plan.notes) {
    out += style.yellow("note: ") + note + "\n";
  }
  return out;
}

std::string what_fits(const plan::PlanConfig& config, const plan::MemoryPlan& plan) {
  std::vector<std::string> options;
  std::string gpus;
  if (plan.devices) {
    const auto mib = [](std::uint64_t b) { return static_cast<double>(b) / 1048576.0; };
    for (const plan::DevicePart& g : plan.devices->gpus) {
      if (!g.fits && g.available_bytes) {
        gpus += fmt::format(
            "{} ({}) needs {:.2f} MiB for {}, but has {:.2f} MiB free − {:.2f} "
            "MiB reserve = {:.2f} MiB. ",
            g.name, g.description, mib(g.total_bytes), where_text(g.layers, g.output_layer),
            mib(*g.free_bytes), mib(g.reserve_bytes), mib(*g.available_bytes));
      }
    }
    for (const plan::DevicePart& g : plan.devices->gpus) {
      if (!g.fits && g.available_bytes && g.projector_bytes > 0) {
        gpus += fmt::format(
            "The projector takes {:.2f} MiB of {}: --no-mmproj-offload keeps it in host memory. ",
            mib(g.projector_bytes), g.name);
      }
    }
    if (!gpus.empty() && plan.devices->max_gpu_layers_that_fit) {
      gpus += fmt::format(
          "With these settings at most {} of the {} layers fit on the GPU(s): -ngl {} "
          "(--gpu-layers "
          "{}; the rest run on the CPU, K1), or lower the context. ",
          *plan.devices->max_gpu_layers_that_fit, plan.devices->layer_count,
          *plan.devices->max_gpu_layers_that_fit, *plan.devices->max_gpu_layers_that_fit);
    }
  }
  if (plan.max_slots_that_fit > 0 && plan.max_slots_that_fit < config.slots) {
    options.push_back(
        fmt::format("{} slot(s) of {} cells", plan.max_slots_that_fit, plan.ctx_per_slot));
  }
  if (plan.max_ctx_per_slot_that_fits > 0) {
    options.push_back(
        fmt::format("{} slot(s) of {} cells", config.slots, plan.max_ctx_per_slot_that_fits));
  }
  if (!gpus.empty()) {
    return gpus + (options.empty() ? std::string()
                                   : fmt::format("What fits: {}.", fmt::join(options, ", or ")));
  }
  if (options.empty()) {
    return "Nothing fits with these settings: weights, overhead and the prompt cache alone "
           "leave no room for the KV cache. Lower --cache-ram, --overhead or --reserve, or free "
           "memory.";
  }
  return fmt::format("What fits: {}.", fmt::join(options, ", or "));
}

}  // namespace gb10tune::render
