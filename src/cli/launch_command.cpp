#include "launch_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/report/plan_report.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "size_option.hpp"

namespace gb10tune::cli {

namespace {

struct LaunchOptions {
  bool dry_run = false;
  bool json = false;
  std::string model;
  std::string mmproj;
  std::uint64_t ctx_size = 0;
  std::uint64_t ctx_per_slot = 0;
  std::uint32_t slots = 1;
  std::optional<bool> kv_unified;
  std::string cache_type_k = "f16";
  std::string cache_type_v = "f16";
  std::string cache_type_k_draft = "f16";
  std::string cache_type_v_draft = "f16";
  std::optional<bool> mtp;
  std::uint32_t draft_n_max = 4;
  std::string flash_attn = "on";
  bool swa_full = false;
  std::uint32_t ubatch = 512;
  std::int64_t cache_ram_mib = 8192;
  std::string reserve;
  std::string overhead;
};

Expected<gguf::GgmlType> cache_type(const std::string& option, const std::string& value) {
  if (const auto type = plan::parse_cache_type(value)) {
    return *type;
  }
  return Error{fmt::format("{} '{}' is not a KV cache type llama.cpp accepts; use f32, f16, "
                           "bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 or q5_1",
                           option, value),
               ExitCode::usage};
}

// Reads a GGUF file named on the command line; its errors are the user's input errors.
Expected<gguf::GgufFile> read_named(const std::string& option, const std::string& path) {
  auto file = gguf::read_gguf(path);
  if (!file) {
    return Error{fmt::format("{} {}: {}", option, path, file.error().message), ExitCode::usage};
  }
  return file;
}

// Builds the configuration from the options and the model (defaults that depend on it).
Expected<plan::PlanConfig> to_config(const LaunchOptions& in, const model::ModelFacts& facts,
                                     std::uint64_t projector_bytes) {
  plan::PlanConfig config;
  config.slots = in.slots;
  if (in.ctx_size != 0 && in.ctx_per_slot != 0) {
    return Error{"give either --ctx-size (all slots) or --ctx-per-slot, not both", ExitCode::usage};
  }
  config.ctx_total = in.ctx_per_slot != 0 ? in.ctx_per_slot * in.slots : in.ctx_size;
  // -kvu by default with several slots: one pool that any slot may fill (K8).
  config.kv_unified = in.kv_unified.value_or(in.slots > 1);
  for (auto [option, value, target] :
       {std::tuple{"--cache-type-k", &in.cache_type_k, &config.cache_k},
        std::tuple{"--cache-type-v", &in.cache_type_v, &config.cache_v},
        std::tuple{"--cache-type-k-draft", &in.cache_type_k_draft, &config.draft_cache_k},
        std::tuple{"--cache-type-v-draft", &in.cache_type_v_draft, &config.draft_cache_v}}) {
    const auto type = cache_type(option, *value);
    if (!type) {
      return type.error();
    }
    *target = *type;
  }
  config.flash_attention = in.flash_attn != "off";
  config.swa_full = in.swa_full;
  config.ubatch = in.ubatch;
  config.mtp = in.mtp.value_or(facts.has_mtp());  // K4: MTP whenever the model has the head
  config.draft_n_max = in.draft_n_max;
  config.cache_ram_bytes =
      in.cache_ram_mib < 0 ? 0 : static_cast<std::uint64_t>(in.cache_ram_mib) << 20;
  config.projector_bytes = projector_bytes;
  const auto overhead = size_option("--overhead", in.overhead, plan::kDefaultOverheadBytes);
  if (!overhead) {
    return overhead.error();
  }
  config.overhead_bytes = *overhead;
  return config;
}

ExitCode fail(Context& ctx, const Error& error) {
  *ctx.err << "gb10tune launch: " << error.message << "\n";
  return error.code;
}

ExitCode run(const LaunchOptions& in, Context& ctx) {
  if (!in.dry_run) {
    return fail(ctx, Error{"only the dry run is available in this version: add --dry-run to "
                           "print the memory plan without starting anything",
                           ExitCode::usage});
  }
  const auto file = read_named("--model", in.model);
  if (!file) {
    return fail(ctx, file.error());
  }
  const auto facts = model::describe_model(*file);
  if (!facts) {
    return fail(ctx, Error{facts.error().message, ExitCode::usage});
  }
  std::uint64_t projector_bytes = 0;
  if (!in.mmproj.empty()) {
    const auto projector_file = read_named("--mmproj", in.mmproj);
    if (!projector_file) {
      return fail(ctx, projector_file.error());
    }
    const auto projector = model::describe_projector(*projector_file);
    if (!projector) {
      return fail(ctx, Error{projector.error().message, ExitCode::usage});
    }
    projector_bytes = projector->weight_bytes;
  }
  const auto config = to_config(in, *facts, projector_bytes);
  if (!config) {
    return fail(ctx, config.error());
  }
  plan::PlanBudget budget;
  const auto reserve = size_option("--reserve", in.reserve, plan::kDefaultReserveBytes);
  if (!reserve) {
    return fail(ctx, reserve.error());
  }
  budget.reserve_bytes = *reserve;
  if (const auto memory = sys::read_meminfo(ctx.sysroot)) {
    budget.mem_available = memory->available_bytes;
  } else {
    *ctx.err << "warning: " << memory.error().message << "; the plan is not checked\n";
  }
  const auto plan = plan::make_plan(*facts, *config, budget);
  if (!plan) {
    return fail(ctx, plan.error());
  }
  if (in.json) {
    *ctx.out << report::dump_document(report::plan_to_json(*facts, *config, *plan));
  } else {
    *ctx.out << report::render_plan_text(*facts, *config, *plan, ctx.out_style());
  }
  return plan->available_bytes && !plan->fits ? ExitCode::memory_refused : ExitCode::ok;
}

}  // namespace

Runner setup_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* sub = app.add_subcommand(
      "launch",
      "Plan (and, in a later version, start) llama-server for a model: the exact memory the "
      "weights, KV cache, recurrent state and MTP draft context will take, against "
      "MemAvailable.");
  sub->add_flag("--dry-run", o->dry_run, "Print the plan; start nothing");
  sub->add_flag("--json", o->json, "Print one JSON document instead of text");
  sub->add_option("--model,-m", o->model, "The model's GGUF file")->required()->option_text("FILE");
  sub->add_option("--mmproj", o->mmproj, "A multimodal projector GGUF file")->option_text("FILE");
  sub->add_option("--ctx-size,-c", o->ctx_size,
                  "Context cells of all slots together (llama-server -c; default: the model's "
                  "training context)");
  sub->add_option("--ctx-per-slot", o->ctx_per_slot,
                  "Context cells per slot (sets -c = this x slots)");
  sub->add_option("--slots", o->slots, "Parallel slots (llama-server -np; default 1)")
      ->check(CLI::Range(1, 256));
  sub->add_flag_callback(
      "--kvu", [o] { o->kv_unified = true; },
      "One KV pool for all slots (llama-server -kvu; default on with several "
      "slots)");
  sub->add_flag_callback(
      "--no-kvu", [o] { o->kv_unified = false; }, "One KV stream per slot");
  sub->add_option("--cache-type-k", o->cache_type_k, "K cache type (default f16)");
  sub->add_option("--cache-type-v", o->cache_type_v, "V cache type (default f16)");
  sub->add_option("--cache-type-k-draft", o->cache_type_k_draft,
                  "K cache type of the MTP draft context (default f16)");
  sub->add_option("--cache-type-v-draft", o->cache_type_v_draft,
                  "V cache type of the MTP draft context (default f16)");
  sub->add_flag_callback(
      "--mtp", [o] { o->mtp = true; },
      "draft-mtp speculative decoding (default: on when the model has an MTP "
      "head)");
  sub->add_flag_callback(
      "--no-mtp", [o] { o->mtp = false; }, "No speculative decoding");
  sub->add_option("--draft-n-max", o->draft_n_max, "--spec-draft-n-max (default 4, K4)")
      ->check(CLI::Range(1, 64));
  sub->add_option("--flash-attn", o->flash_attn, "on or off (default on)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  sub->add_flag("--swa-full", o->swa_full, "Full-size cache for sliding-window layers");
  sub->add_option("--ubatch", o->ubatch, "Physical batch size (default 512)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--cache-ram", o->cache_ram_mib,
                  "Prompt cache limit in MiB (llama-server --cache-ram; default 8192, -1 none)");
  sub->add_option("--reserve", o->reserve, "Memory kept for the system (default 12GB)")
      ->option_text("SIZE");
  sub->add_option("--overhead", o->overhead, "Compute buffers and slack, an estimate (default 6GB)")
      ->option_text("SIZE");
  sub->footer(
      "Exit codes: 0 the plan fits, 2 usage error or unreadable model, 3 the plan does not fit "
      "(the output says what would).");
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
