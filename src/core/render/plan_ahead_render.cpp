// The plan-ahead report: compute-then-render of PlanAheadView as text and JSON.
#include "gb10tune/render/plan_ahead_render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "gb10tune/render/node_plan_render.hpp"
#include "gb10tune/render/plan_render.hpp"
#include "gb10tune/util/shell_quote.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::render {

namespace {

std::string context_cell(const std::optional<std::uint64_t>& ctx) {
  if (!ctx) {
    return "n/a";
  }
  return *ctx == 0 ? "none fits" : fmt::format("{}", *ctx);
}

nlohmann::json context_json(const std::optional<std::uint64_t>& ctx) {
  return ctx ? nlohmann::json(*ctx) : nlohmann::json(nullptr);
}

std::string ceiling_line(const launch::DecodeCeiling& c) {
  if (!c.available) {
    return "decode ceiling: unknown (" + c.missing + ")";
  }
  std::string line = fmt::format(
      "decode ceiling (K12): {:.1f} t/s per stream = {:.0f} GB/s ({}) / {} read per token", c.tps,
      c.bandwidth_bytes_per_second / 1e9, c.bandwidth_source, format_bytes_si(c.bytes_per_token));
  if (!c.nodes.empty()) {
    std::vector<std::string> parts;
    for (const launch::NodeRead& n : c.nodes) {
      parts.push_back(
          fmt::format("{} {} in {:.1f} ms", n.node, format_bytes_si(n.bytes), n.seconds * 1e3));
    }
    line += fmt::format(" (over RPC, one machine after the other: {})", fmt::join(parts, " + "));
  }
  if (c.mtp_high_tps > 0) {
    line += fmt::format(
        "; with the MTP head {:.1f}–{:.1f} t/s (× mean accepted length {:.2f}–{:.2f}, K4; "
        "drafting costs more than one read, so a bound)",
        c.mtp_low_tps, c.mtp_high_tps, launch::kMtpMeanAcceptedLow, launch::kMtpMeanAcceptedHigh);
  }
  if (!c.left_out.empty()) {
    line += "; " + c.left_out;
  }
  return line;
}

// The ceiling as the context fills, with what published runs of such a model reached.
std::string depth_lines(const launch::DecodeCeiling& c) {
  if (c.at_depth.empty()) {
    return c.depth_missing.empty() || !c.available
               ? std::string()
               : "decode ceiling by depth: unknown (" + c.depth_missing + ")\n";
  }
  std::string out = fmt::format(
      "decode ceiling by depth (the cache a token reads added); expect {:.2f}–{:.2f} of it, "
      "what published GB10 runs of {} models reached (an expectation, not a measurement):\n",
      c.expect.low, c.expect.high, c.expect.kind);
  out +=
      fmt::format("  {:>8}  {:>10}  {:>10}  {:>13}\n", "depth", "cache read", "ceiling", "expect");
  for (const launch::DepthCeiling& row : c.at_depth) {
    out += fmt::format("  {:>8}  {:>10}  {:>6.1f} t/s  {:>5.1f}–{:.1f} t/s\n", row.depth,
                       format_bytes_si(row.cache_bytes), row.tps, row.expect_low_tps,
                       row.expect_high_tps);
  }
  return out;
}

nlohmann::json depths_json(const launch::DecodeCeiling& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const launch::DepthCeiling& row : c.at_depth) {
    rows.push_back({{"depth", row.depth},
                    {"cache_bytes", row.cache_bytes},
                    {"bytes_per_token", row.bytes_per_token},
                    {"tps", row.tps},
                    {"expect_tps_low", row.expect_low_tps},
                    {"expect_tps_high", row.expect_high_tps}});
  }
  nlohmann::json doc = nlohmann::json::object();
  doc["rows"] = std::move(rows);
  doc["missing"] =
      c.depth_missing.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.depth_missing);
  doc["expect"] = nullptr;
  if (!c.at_depth.empty()) {
    doc["expect"] = {{"kind", c.expect.kind},
                     {"low", c.expect.low},
                     {"high", c.expect.high},
                     {"basis", c.expect.basis}};
  }
  return doc;
}

nlohmann::json ceiling_nodes_json(const launch::DecodeCeiling& c) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const launch::NodeRead& n : c.nodes) {
    nodes.push_back({{"node", n.node}, {"bytes", n.bytes}, {"seconds", n.seconds}});
  }
  return nodes;
}

// A described machine's GPUs: its integrated one (one pool), or the discrete ones with their
// memory (this machine's are read by the planner, not listed here).
nlohmann::json machine_gpus_json(const launch::TargetMachine& m) {
  nlohmann::json gpus = nlohmann::json::array();
  if (!m.gpu.empty()) {
    gpus.push_back({{"name", m.gpu}, {"integrated", true}, {"memory_bytes", nullptr}});
  }
  for (const launch::DescribedGpu& g : m.discrete_gpus) {
    gpus.push_back({{"name", g.name}, {"integrated", false}, {"memory_bytes", g.memory_bytes}});
  }
  return gpus;
}

std::string choice_line(const launch::LaunchChoice& c) {
  const std::string budget = c.available_bytes
                                 ? fmt::format("{} of {} available", format_bytes(c.total_bytes),
                                               format_bytes(*c.available_bytes))
                                 : format_bytes(c.total_bytes) + ", the budget unknown";
  const std::string context =
      c.kv_unified && c.slots > 1
          ? fmt::format("{} slots sharing a pool of {} tokens (-kvu)", c.slots, c.ctx_per_slot)
          : fmt::format("{} slot(s) × {} tokens", c.slots, c.ctx_per_slot);
  return fmt::format("launch would choose {}, KV {}/{}, MTP {}: {} ({}{})", context, c.cache_type_k,
                     c.cache_type_v, c.mtp ? "on" : "off", budget, c.fits ? "fits" : "does not fit",
                     c.fitted ? ", lowered by the fit" : "");
}

}  // namespace

std::vector<std::string> planned_argv(const launch::LaunchChoice& choice) {
  std::vector<std::string> argv = choice.argv;
  if (!argv.empty() && argv.front().find('/') == std::string::npos) {
    argv.front() = "llama-server";  // the assumed build's label stands for no file
  }
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-m" || argv[i] == "--model") {
      const std::string& model = argv[i + 1];
      const auto query = model.find('?');
      argv[i + 1] = std::filesystem::path(model.substr(0, query)).filename().string();
    }
  }
  return argv;
}

std::string render_plan_ahead(const PlanAheadView& view, const TextStyle& style) {
  const launch::PlanModel& model = *view.model;
  const launch::WhatFits& fits = *view.fits;
  std::string out;
  out += fmt::format("model: {} ({}, {} file(s), {})\n", model.candidate.path.string(),
                     model.facts.architecture, model.files.size(),
                     format_bytes_si(model.total_size()));
  if (model.remote) {
    const auto cached = std::count_if(model.files.begin(), model.files.end(),
                                      [](const launch::PlannedFile& f) { return f.from_cache; });
    const bool whole = std::any_of(model.files.begin(), model.files.end(),
                                   [](const launch::PlannedFile& f) { return f.whole_file; });
    out += fmt::format(
        "read: {} of the {} {} ({:.3f}%), {}{}\n", format_bytes(model.total_read()),
        model.files.size() == 1 ? "file's" : "files'", format_bytes(model.total_size()),
        100.0 * static_cast<double>(model.total_read()) /
            static_cast<double>(std::max<std::uint64_t>(model.total_size(), 1)),
        whole ? "the whole file: the server ignores Range requests (a file this small is read "
                "whole)"
              : "headers only",
        cached == 0 ? "" : fmt::format("; {} header(s) from the cache", cached));
  }
  out += fmt::format("machine: {} ({}, {} available{})\n", view.machine->description,
                     view.machine->name, format_bytes(view.machine->available_bytes),
                     view.machine->nodes > 1 ? " on each" : "");
  for (std::size_t i = 0; i < view.machine->discrete_gpus.size(); ++i) {
    const launch::DescribedGpu& g = view.machine->discrete_gpus[i];
    out += fmt::format("  CUDA{}: {}, {} of its own\n", i, g.name, format_bytes_si(g.memory_bytes));
  }
  out += "llama-server: " + view.build + "\n\n";
  out +=
      style.bold(fmt::format("{:>6}  {:>14}  {:>14}", "slots", "ctx/slot f16", "ctx/slot q8_0")) +
      "\n";
  for (const launch::WhatFitsRow& row : fits.rows) {
    out += fmt::format("{:>6}  {:>14}  {:>14}\n", row.slots, context_cell(row.ctx_f16),
                       context_cell(row.ctx_q8_0));
  }
  out += fmt::format(
      "(the largest context per slot that fits, up to the model's training "
      "context of {} tokens)\n\n",
      fits.training_context);
  out += ceiling_line(fits.ceiling) + "\n";
  out += depth_lines(fits.ceiling);
  out += choice_line(fits.launch) + "\n";
  out += "  " + shell_join(planned_argv(fits.launch)) + "\n";
  if (fits.launch.rpc) {
    out += render_rpc_text(*fits.launch.rpc, style);
  }
  for (const std::string& note : fits.notes) {
    out += style.yellow("note: ") + note + "\n";
  }
  return out;
}

nlohmann::json plan_ahead_json(const PlanAheadView& view) {
  nlohmann::json doc = make_document("plan");
  const launch::PlanModel& model = *view.model;
  nlohmann::json files = nlohmann::json::array();
  for (const launch::PlannedFile& f : model.files) {
    files.push_back({{"name", f.name},
                     {"found_at", f.found_at},
                     {"size", f.size},
                     {"header_bytes", f.header_bytes},
                     {"bytes_read", f.bytes_read},
                     {"header_only", f.header_only},
                     {"from_cache", f.from_cache},
                     {"whole_file", f.whole_file}});
  }
  doc["model"] = {{"source", model.candidate.path.string()},
                  {"remote", model.remote},
                  {"files", std::move(files)},
                  {"size", model.total_size()},
                  {"bytes_read", model.total_read()}};
  const launch::WhatFits& fits = *view.fits;
  nlohmann::json rows = nlohmann::json::array();
  for (const launch::WhatFitsRow& row : fits.rows) {
    rows.push_back({{"slots", row.slots},
                    {"ctx_per_slot_f16", context_json(row.ctx_f16)},
                    {"ctx_per_slot_q8_0", context_json(row.ctx_q8_0)}});
  }
  const launch::DecodeCeiling& c = fits.ceiling;
  const launch::LaunchChoice& l = fits.launch;
  doc["plan"] = {
      {"architecture", model.facts.architecture},
      {"machine",
       {{"name", view.machine->name},
        {"description", view.machine->description},
        {"memory_bytes", view.machine->memory_bytes},
        {"available_bytes", view.machine->available_bytes},
        {"backend", view.machine->backend},
        {"described_gpus", machine_gpus_json(*view.machine)}}},
      {"llama_server", view.build},
      {"training_context", fits.training_context},
      {"what_fits", std::move(rows)},
      {"decode_ceiling", decode_ceiling_json(c)},
      {"launch",
       {{"argv", planned_argv(l)},
        {"slots", l.slots},
        {"ctx_per_slot", l.ctx_per_slot},
        {"kv_unified", l.kv_unified},
        {"cache_type_k", l.cache_type_k},
        {"cache_type_v", l.cache_type_v},
        {"mtp", l.mtp},
        {"total_bytes", l.total_bytes},
        {"available_bytes", l.available_bytes ? nlohmann::json(*l.available_bytes) : nullptr},
        {"fits", l.fits},
        {"fitted", l.fitted},
        {"memory", plan_to_json(model.facts, l.config, l.memory)["plan"]},
        {"rpc", l.rpc ? rpc_to_json(*l.rpc) : nlohmann::json(nullptr)}}},
      {"notes", fits.notes}};
  return doc;
}

std::string render_decode_ceiling(const launch::DecodeCeiling& ceiling) {
  return ceiling_line(ceiling) + "\n" + depth_lines(ceiling);
}

nlohmann::json decode_ceiling_json(const launch::DecodeCeiling& c) {
  return {{"available", c.available},
          {"missing", c.missing},
          {"bytes_per_token", c.bytes_per_token},
          {"bandwidth_bytes_per_second", c.bandwidth_bytes_per_second},
          {"bandwidth_source", c.bandwidth_source},
          {"tps", c.tps},
          {"mtp_tps_low", c.mtp_low_tps},
          {"mtp_tps_high", c.mtp_high_tps},
          {"nodes", ceiling_nodes_json(c)},
          {"left_out", c.left_out},
          {"at_depth", depths_json(c)}};
}

}  // namespace gb10tune::render
