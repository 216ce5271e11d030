#include "launch_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/launch/child_environment.hpp"
#include "gb10tune/launch/model_discovery.hpp"
#include "gb10tune/launch/profile.hpp"
#include "gb10tune/launch/rule_verdict.hpp"
#include "gb10tune/launch/server_binary.hpp"
#include "gb10tune/launch/server_command.hpp"
#include "gb10tune/launch/server_process.hpp"
#include "gb10tune/launch/server_exports.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/plan/backend_choice.hpp"
#include "gb10tune/plan/calibration.hpp"
#include "gb10tune/plan/fit.hpp"
#include "gb10tune/plan/memory_plan.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/report/launch_report.hpp"
#include "gb10tune/report/node_report.hpp"
#include "gb10tune/report/plan_report.hpp"
#include "gb10tune/rpc/node_plan.hpp"
#include "gb10tune/rpc/rpc_client.hpp"
#include "gb10tune/rpc/rpc_worker.hpp"
#include "gb10tune/server/server_build.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/sys/gb10.hpp"
#include "gb10tune/sys/meminfo.hpp"
#include "gb10tune/trust/private_files.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/util/systemd_syntax.hpp"
#include "gb10tune/util/text_file.hpp"
#include "launch_repack.hpp"
#include "launch_start.hpp"
#include "size_option.hpp"

namespace gb10tune::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What the command line sets; unset options leave the value to the lower layers.
struct LaunchOptions {
  bool dry_run = false;
  bool json = false;
  bool explain = false;
  bool force = false;
  std::string print;
  std::string backend = "auto";  // auto: from the llama-server build and the machine
  std::string gpu_reserve;       // --gpu-reserve: kept free on each discrete GPU
  std::string profile;
  std::vector<std::string> extra;
  nlohmann::json values = nlohmann::json::object();  // settings given on the command line
  std::optional<std::int64_t> ctx_size;  // -c: all slots together (becomes ctx_per_slot)
  std::string rpc;                       // --rpc HOST:PORT[,…]: the workers
  std::string rpc_reserve;               // --rpc-reserve: kept free on each worker
};

// The command-line option that sets launch setting `key`, for messages.
std::string option_of(std::string_view key) {
  for (const launch::SettingSpec& spec : launch::launch_setting_specs()) {
    if (spec.key == key && !spec.option.empty()) {
      return std::string(spec.option.substr(0, spec.option.find(',')));
    }
  }
  if (key == "kv_unified") {
    return "--kvu/--no-kvu";
  }
  if (key == "mtp") {
    return "--mtp/--no-mtp";
  }
  std::string option = "--" + std::string(key);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

// The command line's values go through the same checks as a profile's or the user config's.
Status check_command_line(const nlohmann::json& values) {
  for (const auto& [key, value] : values.items()) {
    if (auto ok = launch::check_setting(key, value, "command line " + option_of(key)); !ok) {
      return ok;
    }
  }
  return {};
}

// Says why it failed (stderr, and with --json a document on stdout); returns the exit code.
ExitCode fail(Context& ctx, const Error& error) {
  return report_failure(ctx, error);
}

// The user's config ($XDG_CONFIG_HOME/gb10tune/config.json); nullopt when there is none.
Expected<std::optional<launch::SettingsDocument>> read_user_config(const Context& ctx,
                                                                   std::string& path_out) {
  const auto dir = platform::config_dir(ctx.env);
  if (!dir) {
    return std::optional<launch::SettingsDocument>{};
  }
  const auto path = *dir / "config.json";
  path_out = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return std::optional<launch::SettingsDocument>{};
  }
  const auto text = read_text_file(path);
  if (!text) {
    return Error{fmt::format("user config {} cannot be read; fix its permissions or remove it",
                             path.string()),
                 ExitCode::usage};
  }
  auto doc = launch::parse_settings_document(*text, path.string());
  if (!doc) {
    return doc.error();
  }
  return std::optional<launch::SettingsDocument>(std::move(*doc));
}

// Reads a GGUF file; its errors are the user's input errors.
Expected<gguf::GgufFile> read_named(const std::string& what, const std::string& path) {
  auto file = gguf::read_gguf(path);
  if (!file) {
    return Error{fmt::format("{} {}: {}", what, path, file.error().message), ExitCode::usage};
  }
  return file;
}

// The model's files: --model/settings "model", else the one model of the models folder.
Expected<launch::ModelCandidate> find_model(const launch::LaunchSettings& s, const Context& ctx) {
  if (const auto model = s.text("model"); !model.empty()) {
    return launch::candidate_for_file(launch::expand_home(model, ctx.env));
  }
  const fs::path dir = launch::expand_home(s.text("models_dir"), ctx.env);
  const auto folder = launch::scan_models_folder(dir);
  if (!folder) {
    return folder.error();
  }
  return launch::pick_model(*folder, dir);
}

// The projector: none, the path given, or the one *mmproj*.gguf beside the model.
Expected<std::string> find_projector(const launch::LaunchSettings& s, const fs::path& model,
                                     const Context& ctx) {
  const auto mode = s.text("mmproj");
  if (mode == "none") {
    return std::string();
  }
  if (mode != "auto") {
    return launch::expand_home(mode, ctx.env);
  }
  const auto folder = launch::scan_models_folder(model.parent_path());
  if (!folder || folder->projectors.empty()) {
    return std::string();
  }
  if (folder->projectors.size() > 1) {
    std::string list;
    for (const auto& p : folder->projectors) {
      list += "\n  " + p.string();
    }
    return Error{fmt::format("{} projector files beside the model; choose one with --mmproj "
                             "FILE, or --no-mmproj:{}",
                             folder->projectors.size(), list),
                 ExitCode::usage};
  }
  return folder->projectors.front().string();
}

// llama-server's projector options given after -- (-mm/--mmproj FILE, --mmproj=FILE,
// --no-mmproj-offload, --mmproj-offload) become launch's own settings, so that the plan counts
// the projector and the command carries it once. An Error when they contradict launch's own
// options.
Status lift_projector_args(LaunchOptions& in) {
  std::vector<std::string> kept;
  const auto set = [&in](const char* key, const char* option, const nlohmann::json& value,
                         const std::string& arg) -> Status {
    if (in.values.contains(key) && in.values[key] != value) {
      return Error{
          fmt::format("{} after -- contradicts launch's own {}; give it once", arg, option),
          ExitCode::usage};
    }
    in.values[key] = value;
    return {};
  };
  for (std::size_t i = 0; i < in.extra.size(); ++i) {
    const std::string& arg = in.extra[i];
    Status status;
    if (arg == "-mm" || arg == "--mmproj") {
      if (i + 1 >= in.extra.size()) {
        return Error{fmt::format("{} after -- needs a file", arg), ExitCode::usage};
      }
      status = set("mmproj", "--mmproj/--no-mmproj", in.extra[i + 1], arg);
      ++i;
    } else if (arg.rfind("--mmproj=", 0) == 0) {
      status = set("mmproj", "--mmproj/--no-mmproj", arg.substr(9), arg);
    } else if (arg == "--no-mmproj-offload" || arg == "--mmproj-offload") {
      status = set("mmproj_offload", "--no-mmproj-offload", arg == "--mmproj-offload", arg);
    } else {
      kept.push_back(arg);
    }
    if (!status) {
      return status;
    }
  }
  in.extra = std::move(kept);
  return {};
}

// llama-server's --rpc after -- becomes launch's own --rpc, so that the workers are contacted
// and planned. An Error when it contradicts launch's own --rpc.
Status lift_rpc_args(LaunchOptions& in) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < in.extra.size(); ++i) {
    const std::string& arg = in.extra[i];
    std::string value;
    if (arg == "--rpc") {
      if (i + 1 >= in.extra.size()) {
        return Error{"--rpc after -- needs HOST:PORT[,HOST:PORT…]", ExitCode::usage};
      }
      value = in.extra[++i];
    } else if (arg.rfind("--rpc=", 0) == 0) {
      value = arg.substr(6);
    } else {
      kept.push_back(arg);
      continue;
    }
    if (!in.rpc.empty() && in.rpc != value) {
      return Error{fmt::format("--rpc {} after -- contradicts launch's own --rpc {}; give it once",
                               value, in.rpc),
                   ExitCode::usage};
    }
    in.rpc = value;
  }
  in.extra = std::move(kept);
  return {};
}

// How long one worker may take to answer the hello and its memory.
constexpr std::chrono::milliseconds kWorkerTimeout{5000};

// The workers a llama-server launched from here still uses, as its record saw them at its
// launch: rpc-server serves one client at a time, and a hello queued behind a running head's
// session is read when the head leaves, when rpc-server answers a closed socket and dies of
// SIGPIPE. Such a worker is never contacted.
std::vector<rpc::WorkerInfo> workers_in_use(const Context& ctx) {
  std::vector<rpc::WorkerInfo> out;
  const auto dir = trust::private_state_dir(ctx.env);
  if (!dir) {
    return out;
  }
  const auto status = launch::check_pid_file(ctx.sysroot, launch::StatePaths::under(*dir));
  if (status.state != launch::PidFileState::running || !status.server->record.planned.rpc) {
    return out;
  }
  for (const launch::RecordedWorker& w : status.server->record.planned.rpc->workers) {
    auto endpoint = rpc::parse_endpoint(w.endpoint);
    if (!endpoint) {
      continue;
    }
    rpc::WorkerInfo info;
    info.endpoint = *endpoint;
    unsigned major = 0, minor = 0, patch = 0;
    if (std::sscanf(w.protocol_version.c_str(), "%u.%u.%u", &major, &minor, &patch) == 3) {
      info.version = {static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor),
                      static_cast<std::uint8_t>(patch)};
    }
    info.devices = w.devices;
    out.push_back(std::move(info));
  }
  return out;
}

// Asks every worker for its protocol version and memory (but not one in `in_use`). A worker
// that does not answer is an Error (exit 5: the server cannot start without it) naming it; one
// of a protocol the head cannot use an Error (exit 2) naming it and both versions.
Expected<std::vector<rpc::WorkerInfo>> contact_workers(const std::vector<rpc::Endpoint>& endpoints,
                                                       const rpc::ProtocolVersion& head,
                                                       const std::vector<rpc::WorkerInfo>& in_use,
                                                       std::ostream& err) {
  std::vector<rpc::WorkerInfo> workers;
  for (const rpc::Endpoint& endpoint : endpoints) {
    const auto busy = std::find_if(in_use.begin(), in_use.end(), [&](const rpc::WorkerInfo& w) {
      return w.endpoint == endpoint;
    });
    if (busy != in_use.end()) {
      err << "gb10tune launch: RPC worker " << endpoint.to_string()
          << " serves the llama-server launched from here: not contacted (it serves one client "
             "at a time); planned with what it reported at that launch\n";
      workers.push_back(*busy);
      continue;
    }
    auto version = rpc::hello_worker(endpoint, kWorkerTimeout);
    if (!version) {
      return Error{fmt::format("{}; nothing was started (llama-server cannot load without every "
                               "worker; start it there with `gb10tune rpc start --host {} --port "
                               "{}`, or leave it out of --rpc)",
                               version.error().message, endpoint.host, endpoint.port),
                   ExitCode::server_failed};
    }
    if (!rpc::compatible(*version, head)) {
      return Error{fmt::format("RPC worker {} speaks RPC protocol {}, the head's llama-server "
                               "speaks {}: llama.cpp refuses a worker of another major version "
                               "or a newer minor version. Build rpc-server and llama-server from "
                               "the same llama.cpp commit on both machines; nothing was started",
                               endpoint.to_string(), version->to_string(), head.to_string()),
                   ExitCode::usage};
    }
    auto info = rpc::query_worker(endpoint, kWorkerTimeout, head);
    if (!info) {
      return Error{info.error().message + "; nothing was started", ExitCode::server_failed};
    }
    workers.push_back(std::move(*info));
  }
  return workers;
}

// The settings layers: built-in < profile < user config < command line.
struct Layers {
  std::optional<launch::SettingsDocument> user;
  std::string user_path;
  std::string profile;  // name or path; "" = choose by model
  std::string profile_reason;
};

launch::LaunchSettings resolve(const Layers& layers, const launch::SettingsDocument* profile,
                               const LaunchOptions& in,
                               const launch::SettingsLayer* fitted = nullptr) {
  std::vector<launch::SettingsLayer> list;
  if (profile != nullptr) {
    list.push_back({"profile " + layers.profile, profile->settings});
  }
  if (layers.user) {
    list.push_back({"user config " + layers.user_path, layers.user->settings});
  }
  list.push_back({"command line", in.values});
  if (fitted != nullptr) {
    list.push_back(*fitted);
  }
  return launch::LaunchSettings::resolve(list);
}

plan::PlanConfig plan_config(const launch::LaunchSettings& s, const launch::ServerCommand& cmd,
                             const std::optional<model::ProjectorFacts>& projector,
                             std::uint64_t overhead) {
  plan::PlanConfig config;
  config.ctx_total = cmd.ctx_total;
  config.slots = cmd.slots;
  config.kv_unified = cmd.kv_unified;
  config.cache_k = *plan::parse_cache_type(s.text("cache_type_k"));
  config.cache_v = *plan::parse_cache_type(s.text("cache_type_v"));
  config.flash_attention = s.text("flash_attn") != "off";
  config.swa_full = s.boolean("swa_full");
  config.ubatch = static_cast<std::uint32_t>(s.integer("ubatch"));
  config.mtp = cmd.mtp;
  config.draft_n_max = cmd.mtp ? cmd.draft_n_max : 3;
  const auto ram = s.integer("cache_ram_mib");
  // -1 (no limit) is planned by plan_unbounded_cache once the cache geometry is known.
  config.cache_ram_bytes = ram < 0 ? 0 : static_cast<std::uint64_t>(ram) << 20;
  config.projector = projector;
  config.projector_offload = s.boolean("mmproj_offload");
  config.overhead_bytes = overhead;
  return config;
}

// --cache-ram -1: llama-server (tools/server, server_prompt_cache) then drops the byte limit
// and keeps only its token limit: saved prompt states of at most n_ctx tokens in total. That
// is bounded by n_ctx cells of KV state (plus the MTP draft context's), so it is planned at
// that size. Each saved state of a model with recurrent layers also carries a whole recurrent
// state, however short the prompt, so there nothing bounds the cache but a failed allocation:
// refused on GB10 (the cache shares the one memory with the GPU's buffers), elsewhere planned
// as everything the plan leaves, and said so. Returns the plan to use.
Expected<plan::MemoryPlan> plan_unbounded_cache(const model::ModelFacts& model,
                                                plan::PlanConfig& config,
                                                const plan::PlanBudget& budget,
                                                plan::MemoryPlan first, bool gb10) {
  if (model.is_hybrid()) {
    if (gb10) {
      return Error{
          "--cache-ram -1 (no limit): this model has recurrent layers, so every saved prompt "
          "carries a whole recurrent state and llama-server's prompt cache has no bound but a "
          "failed allocation; on GB10 it shares the one memory with the GPU's buffers. Give a "
          "limit in MiB, e.g. --cache-ram 24576 (K8)",
          ExitCode::usage};
    }
    const std::uint64_t left = first.available_bytes && *first.available_bytes > first.total_bytes
                                   ? *first.available_bytes - first.total_bytes
                                   : 0;
    config.cache_ram_bytes = left;
    auto plan = plan::make_plan(model, config, budget);
    if (plan) {
      plan->notes.push_back(fmt::format(
          "--cache-ram -1 (no limit): with recurrent layers the prompt cache has no bound, so "
          "it is planned as everything left ({}); give a limit in MiB to keep room",
          format_bytes_si(left)));
    }
    return plan;
  }
  const auto full = model.kv_bytes_per_cell(model::KvScope::full_attention, config.cache_k,
                                            config.cache_v, !config.flash_attention);
  const auto swa = model.kv_bytes_per_cell(model::KvScope::sliding_window, config.cache_k,
                                           config.cache_v, !config.flash_attention);
  if (!full || !swa) {
    return Error{!full ? full.error().message : swa.error().message, ExitCode::usage};
  }
  config.cache_ram_bytes = first.n_ctx * (*full + *swa) + first.mtp_kv_bytes;
  auto plan = plan::make_plan(model, config, budget);
  if (plan) {
    plan->notes.push_back(fmt::format(
        "--cache-ram -1 (no limit): llama-server then bounds the prompt cache by its token "
        "limit only (n_ctx = {} tokens of saved state), planned as {}",
        first.n_ctx, format_bytes_si(config.cache_ram_bytes)));
  }
  return plan;
}

// The calibration file of the state directory; nullopt without a state directory, an Error when
// the state directory may not be believed.
Expected<std::optional<fs::path>> calibration_path(const Context& ctx) {
  const auto dir = platform::state_dir(ctx.env);
  if (!dir) {
    return std::optional<fs::path>();
  }
  if (const Status trusted = trust::check_state_dir(*dir); !trusted) {
    return trusted.error();
  }
  return std::optional<fs::path>(*dir / "calibration.json");
}

// Applies the correction learned for `key` to `config`; a broken file is a warning.
void apply_calibration(const Context& ctx, const plan::CalibrationKey& key,
                       plan::PlanConfig& config) {
  const auto path = calibration_path(ctx);
  if (!path) {
    *ctx.err << "warning: " << path.error().message << "; the plan is not calibrated\n";
    return;
  }
  if (!*path) {
    return;
  }
  const auto store = plan::read_calibration_store(**path);
  if (!store) {
    *ctx.err << "warning: " << store.error().message << "; the plan is not calibrated\n";
    return;
  }
  if (const auto correction = plan::correction_for(*store, key)) {
    config.calibration_bytes = correction->bytes;
    config.calibration_source = correction->source;
  }
  config.calibration_note = plan::unapplied_runs_note(*store, key);
}

Status check_cache_types(const launch::LaunchSettings& s) {
  for (const auto* key : {"cache_type_k", "cache_type_v"}) {
    if (!plan::parse_cache_type(s.text(key))) {
      return Error{fmt::format("{} '{}' ({}) is not a KV cache type llama.cpp accepts; use f32, "
                               "f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 or q5_1",
                               key, s.text(key), s.at(key).source),
                   ExitCode::usage};
    }
  }
  return {};
}

ExitCode run(LaunchOptions in, Context& ctx) {
  if (!in.extra.empty() && in.extra.front().rfind('-', 0) != 0) {
    return fail(ctx, Error{fmt::format("unexpected argument '{}'; llama-server arguments go "
                                       "after --, e.g. gb10tune launch -- --threads 8",
                                       in.extra.front()),
                           ExitCode::usage});
  }
  if (auto lifted = lift_projector_args(in); !lifted) {
    return fail(ctx, lifted.error());
  }
  if (auto lifted = lift_rpc_args(in); !lifted) {
    return fail(ctx, lifted.error());
  }
  // LLAMA_ARG_RPC (K16) would make the server use workers nobody planned: it is taken as --rpc
  // (the command line's --rpc wins, as in llama-server).
  if (const auto from_env = ctx.env.get("LLAMA_ARG_RPC"); from_env && !from_env->empty()) {
    if (in.rpc.empty()) {
      in.rpc = *from_env;
      *ctx.err << "gb10tune launch: LLAMA_ARG_RPC=" << *from_env
               << " in the environment: planned as --rpc " << *from_env << "\n";
    }
  }
  std::vector<rpc::Endpoint> endpoints;
  if (!in.rpc.empty()) {
    auto parsed = rpc::parse_endpoint_list(in.rpc);
    if (!parsed) {
      return fail(ctx, parsed.error());
    }
    endpoints = std::move(*parsed);
    std::vector<std::string> list;
    for (const auto& e : endpoints) {
      list.push_back(e.to_string());
    }
    in.extra.push_back("--rpc");
    in.extra.push_back(fmt::format("{}", fmt::join(list, ",")));
  }
  if (!in.extra.empty()) {
    in.values["extra_args"] = in.extra;
  }
  if (auto ok = check_command_line(in.values); !ok) {
    return fail(ctx, ok.error());
  }
  Layers layers;
  auto user = read_user_config(ctx, layers.user_path);
  if (!user) {
    return fail(ctx, user.error());
  }
  layers.user = std::move(*user);
  if (!in.profile.empty()) {
    layers.profile = in.profile;
    layers.profile_reason = "--profile";
  } else if (layers.user && !layers.user->profile.empty()) {
    layers.profile = layers.user->profile;
    layers.profile_reason = "user config";
  }
  // Find the model with the settings known so far (profiles do not name models).
  auto settings = resolve(layers, nullptr, in);
  const auto candidate = find_model(settings, ctx);
  if (!candidate) {
    return fail(ctx, candidate.error());
  }
  // Every shard of a split model (split.count in the header), so that the weights and the
  // bytes read per token are the whole model's.
  auto facts = model::read_model(candidate->path);
  if (!facts) {
    return fail(ctx, Error{facts.error().message, ExitCode::usage});  // it names the file
  }
  if (layers.profile.empty()) {
    layers.profile = facts->is_moe() ? "gb10-moe" : "gb10-dense-mtp";
    layers.profile_reason = facts->is_moe() ? "chosen: the model is a mixture of experts"
                                            : "chosen: the default for dense models";
  }
  const auto profile = launch::load_profile(layers.profile);
  if (!profile) {
    return fail(ctx, profile.error());
  }
  if (in.ctx_size && in.values.contains("ctx_per_slot")) {
    return fail(ctx, Error{"give either --ctx-size (all slots) or --ctx-per-slot, not both",
                           ExitCode::usage});
  }
  if (in.ctx_size) {
    // -c counts all slots: spread it over them; -c 0 is the model's native context per slot,
    // as for llama-server.
    const auto slots = resolve(layers, &*profile, in).integer("slots");
    const std::int64_t total = *in.ctx_size;
    const std::int64_t per_slot = total / slots;
    std::int64_t max_per_slot = 0;
    for (const auto& spec : launch::launch_setting_specs()) {
      max_per_slot = spec.key == "ctx_per_slot" ? spec.max : max_per_slot;
    }
    if (total < 0 || (total > 0 && per_slot == 0) || per_slot > max_per_slot) {
      return fail(ctx, Error{fmt::format("command line --ctx-size {}: must be 0 (the model's "
                                         "native context per slot) or from {} to {} ({} slot{} "
                                         "of 1 to {} tokens)",
                                         total, slots, max_per_slot * slots, slots,
                                         slots == 1 ? "" : "s", max_per_slot),
                             ExitCode::usage});
    }
    in.values["ctx_per_slot"] = per_slot;
  }
  settings = resolve(layers, &*profile, in);
  if (auto ok = check_cache_types(settings); !ok) {
    return fail(ctx, ok.error());
  }

  const auto mmproj = find_projector(settings, candidate->path, ctx);
  if (!mmproj) {
    return fail(ctx, mmproj.error());
  }
  std::optional<model::ProjectorFacts> projector_facts;
  if (!mmproj->empty()) {
    const auto projector_file = read_named("mmproj", *mmproj);
    if (!projector_file) {
      return fail(ctx, projector_file.error());
    }
    const auto projector = model::describe_projector(*projector_file);
    if (!projector) {
      return fail(ctx, Error{projector.error().message, ExitCode::usage});
    }
    projector_facts = *projector;
  }

  const auto server_path = launch::resolve_server_binary(settings.text("llama_server"), ctx.env);
  if (!server_path) {
    return fail(ctx, server_path.error());
  }
  const auto flags = server::read_server_flags(*server_path);
  if (!flags) {
    return fail(ctx, flags.error());
  }
  if (!endpoints.empty()) {
    const auto* rpc_flag = flags->find("--rpc");
    if (rpc_flag == nullptr || rpc_flag->removed()) {
      return fail(ctx, Error{fmt::format("{} has no --rpc option: it was built without llama.cpp's "
                                         "RPC backend; rebuild it with -DGGML_RPC=ON (and the "
                                         "workers' rpc-server from the same commit)",
                                         *server_path),
                             ExitCode::usage});
    }
  }
  launch::CommandInputs inputs;
  inputs.server_path = *server_path;
  inputs.model_path = candidate->path.string();
  inputs.mmproj_path = *mmproj;
  inputs.gb10 = sys::is_gb10_machine(ctx.sysroot);
  inputs.force = in.force;
  const server::RuleInput rules{facts->has_mtp(), facts->main_layer_count, inputs.gb10};
  // The command, its clean environment and the tuning rules' verdict on both (what verify will
  // say of the started server), for a set of settings (built again after a fit).
  struct Built {
    launch::ServerCommand command;
    launch::ChildEnvironment environment;
    launch::RuleVerdict rules;
  };
  const auto build = [&](const launch::LaunchSettings& s) -> Expected<Built> {
    auto command = launch::build_server_command(s, *facts, *flags, inputs);
    if (!command) {
      return command.error();
    }
    auto environment = launch::prepare_child_environment(ctx.env, *flags, command->argv,
                                                         ctx.sysroot, rules, in.force);
    if (!environment) {
      return environment.error();
    }
    auto verdict =
        launch::judge_command(*flags, *command, environment->env, ctx.sysroot, rules, in.force);
    if (!verdict) {
      return verdict.error();
    }
    return Built{std::move(*command), std::move(*environment), std::move(*verdict)};
  };
  // Never silent: what launch goes on past is said on stderr when no preview shows it.
  const auto warn_all = [&ctx](const Built& b) {
    for (const auto& line : report::launch_warnings(b.command, b.environment, b.rules)) {
      *ctx.err << "gb10tune launch: warning: " << line << "\n";
    }
  };
  auto built = build(settings);
  if (!built) {
    return fail(ctx, built.error());
  }

  // --print: the same command as a start would run (after the fit), for another supervisor.
  // The command a worker runs on its machine (gb10tune rpc start's: the binary by its name,
  // the endpoint's address, the tensor cache on).
  const auto worker_argv_for = [](const rpc::Endpoint& endpoint) {
    rpc::WorkerOptions worker;
    worker.binary = rpc::kWorkerNames[0];
    worker.bind = endpoint;
    worker.cache = true;
    return rpc::worker_argv(worker);
  };
  // What an export's supervisor must unset: the trap variable and every variable launch removed.
  const auto unset_env = [](const Built& b) {
    std::vector<std::string> names{"GGML_CUDA_ENABLE_UNIFIED_MEMORY"};
    for (const auto& change : b.environment.changes) {
      if (change.action == launch::ChangeAction::removed && change.name != names.front()) {
        names.push_back(change.name);
      }
    }
    return names;
  };
  const auto print_export = [&](const Built& b) -> ExitCode {
    if (in.print == "preset") {
      auto preset =
          launch::render_models_preset(candidate->path.stem().string(), b.command.argv, *flags);
      if (!preset) {
        return fail(ctx, preset.error());
      }
      *ctx.out << *preset;
      return ExitCode::ok;
    }
    if (in.print == "llama-swap") {
      launch::LlamaSwapEntry entry;
      entry.name = candidate->path.stem().string();
      entry.argv = b.command.argv;
      entry.unset_env = unset_env(b);
      *ctx.out << launch::render_llama_swap_entry(entry);
      return ExitCode::ok;
    }
    if (in.print == "systemd") {
      launch::SystemdUnit unit;
      unit.argv = b.command.argv;
      unit.unset_env = unset_env(b);
      unit.description =
          fmt::format("llama-server ({}) planned by gb10tune", candidate->path.filename().string());
      if (!endpoints.empty()) {
        unit.description += fmt::format(" over RPC workers {}", in.rpc);
      }
      auto head = launch::render_systemd_unit(unit);
      if (!head) {
        return fail(ctx, head.error());
      }
      if (endpoints.empty()) {
        *ctx.out << *head;
        return ExitCode::ok;
      }
      // One unit per node: the head's here, each worker's for its own machine (started first).
      std::string text = systemd::comment_line(
                             "node: head (this machine), e.g. "
                             "/etc/systemd/system/llama-server.service") +
                         *head;
      for (const rpc::Endpoint& endpoint : endpoints) {
        auto argv = worker_argv_for(endpoint);
        if (!argv) {
          return fail(ctx, argv.error());
        }
        launch::SystemdUnit worker_unit;
        worker_unit.argv = std::move(*argv);
        worker_unit.unset_env = {"GGML_CUDA_ENABLE_UNIFIED_MEMORY"};
        worker_unit.description =
            fmt::format("llama.cpp RPC worker on {} for gb10tune", endpoint.to_string());
        auto worker = launch::render_systemd_unit(worker_unit);
        if (!worker) {
          return fail(ctx, worker.error());
        }
        text += "\n" +
                systemd::comment_line(fmt::format(
                    "node: RPC worker {} (on that machine; give ExecStart the full path of its "
                    "ggml-rpc-server), e.g. /etc/systemd/system/ggml-rpc-server-{}.service",
                    endpoint.to_string(), endpoint.port)) +
                *worker;
      }
      *ctx.out << text;
      return ExitCode::ok;
    }
    return fail(ctx,
                Error{fmt::format("--print {}: not one of systemd, llama-swap, preset", in.print),
                      ExitCode::usage});
  };

  // Two launches must not both find the memory free: the lock is held from the memory check
  // until the server is ready.
  std::optional<LaunchSession> session;
  if (!in.dry_run && in.print.empty()) {
    auto started = LaunchSession::begin(ctx);
    if (!started) {
      return fail(ctx, started.error());
    }
    session.emplace(std::move(*started));
  }

  const auto overhead =
      size_option("--overhead", settings.text("overhead"), plan::kDefaultOverheadBytes);
  const auto reserve =
      size_option("--reserve", settings.text("reserve"), plan::kDefaultReserveBytes);
  if (!overhead || !reserve) {
    return fail(ctx, !overhead ? overhead.error() : reserve.error());
  }
  const auto gpu_reserve =
      size_option("--gpu-reserve", in.gpu_reserve.empty() ? "1GiB" : in.gpu_reserve,
                  plan::kDefaultGpuReserveBytes);
  if (!gpu_reserve) {
    return fail(ctx, gpu_reserve.error());
  }
  const auto rpc_reserve =
      size_option("--rpc-reserve", in.rpc_reserve.empty() ? "1GiB" : in.rpc_reserve,
                  rpc::kDefaultWorkerReserveBytes);
  if (!rpc_reserve) {
    return fail(ctx, rpc_reserve.error());
  }
  const auto placement = plan::parse_placement(settings.text_list("extra_args"));
  if (!placement) {
    return fail(ctx, placement.error());
  }
  const server::CudaBuildFacts cuda_build = server::detect_cuda_build(*server_path);
  const bool machine_has_gpu = sys::nvidia_gpu_count(ctx.sysroot) > 0;
  // CPU repacking (plan/cpu_repack.hpp): a CUDA build with a GPU in use keeps the CPU's
  // weights in the GPU's host buffer; otherwise the build's CPU features decide.
  const bool gpu_in_use = cuda_build.cuda && machine_has_gpu &&
                          std::find(placement->devices.begin(), placement->devices.end(), "none") ==
                              placement->devices.end();
  const plan::RepackFeatures repack_features = launch_repack_features(
      ctx, *server_path, *facts, plan::parse_repack_options(built->command.argv), gpu_in_use);
  const std::string build_identity = launch::server_build_identity(*server_path);
  plan::CalibrationKey key;
  // An architecture without layer rules: --force with an explicit --overhead plans an estimate
  // (the weights plus that overhead); anything less is refused by make_plan with the reason.
  const bool estimate = !facts->supported && in.force;
  if (estimate && settings.at("overhead").source != "command line") {
    return fail(ctx, Error{fmt::format("{}: {}. --force alone cannot plan it: also give "
                                       "--overhead SIZE, what its KV cache, state and compute "
                                       "buffers will need on top of the weights ({})",
                                       facts->source, facts->unsupported_reason,
                                       format_bytes(facts->weight_bytes)),
                           ExitCode::usage});
  }
  const auto configure = [&](const launch::LaunchSettings& s, const launch::ServerCommand& cmd) {
    auto config = plan_config(s, cmd, projector_facts, *overhead);
    config.estimate_unsupported = estimate;
    // The backend decides which compute buffers the server makes (one CPU buffer, or CUDA0 +
    // CUDA_Host) and whether the CUDA runtime's memory counts.
    plan::BackendEvidence evidence;
    evidence.server_has_cuda = cuda_build.cuda;
    evidence.server_evidence = cuda_build.evidence;
    evidence.machine_has_gpu = machine_has_gpu;
    evidence.gpu_layers = cmd.gpu_layers;
    plan::BackendChoice choice = plan::choose_backend(evidence);
    if (in.backend != "auto") {
      choice.backend = in.backend == "cuda" ? plan::PlanBackend::cuda : plan::PlanBackend::cpu;
      choice.reason = "--backend " + in.backend + " (detected: " + choice.reason + ")";
    }
    config.backend = choice.backend;
    config.backend_reason = choice.reason;
    config.repack = plan::repack_setting(plan::parse_repack_options(cmd.argv), repack_features,
                                         gpu_in_use, inputs.gb10);
    config.gpu_layers = cmd.gpu_layers;
    config.tensor_split = placement ? placement->tensor_split : std::vector<float>{};
    // -mmdev after --: the projector's GPU, or none (host memory, like --no-mmproj-offload).
    if (placement && placement->projector_device == "none") {
      config.projector_offload = false;
    } else if (placement) {
      config.projector_device = placement->projector_device;
    }
    key = plan::calibration_key(*facts, build_identity, config, endpoints.size());
    if (!estimate) {  // a calibration learned from an estimate would claim more than it knows
      apply_calibration(ctx, key, config);
    }
    return config;
  };
  auto config = configure(settings, built->command);
  plan::PlanBudget budget;
  budget.reserve_bytes = *reserve;
  if (const auto memory = sys::read_meminfo(ctx.sysroot)) {
    budget.mem_available = memory->available_bytes;
  } else {
    *ctx.err << "warning: " << memory.error().message << "; the plan is not checked\n";
  }
  // A CUDA server on discrete GPUs: device buffers against each GPU's free memory.
  if (config.backend == plan::PlanBackend::cuda && ctx.gpu != nullptr) {
    const gpu::GpuReport devices = ctx.gpu->query_devices();
    const gpu::NvmlReport nvml = ctx.gpu->query_nvml();
    auto gpus = plan::gpu_budgets(devices, nvml, placement->devices, *gpu_reserve);
    if (!gpus) {
      return fail(ctx, gpus.error());
    }
    budget.gpus = std::move(*gpus);
    // The projector's GPU (CUDA0 unless -mmdev) may be one --device left out.
    const std::string projector_gpu =
        config.projector_device.empty() ? std::string("CUDA0") : config.projector_device;
    if (config.projector && config.projector_offload && !budget.gpus.empty() &&
        std::none_of(budget.gpus.begin(), budget.gpus.end(),
                     [&](const plan::GpuBudget& g) { return g.name == projector_gpu; })) {
      auto chosen = plan::gpu_budgets(devices, nvml, {projector_gpu}, *gpu_reserve);
      if (!chosen) {
        return fail(ctx, Error{fmt::format("--mmproj-device {}: no such GPU here (llama.cpp "
                                           "names them CUDA0, CUDA1, …); `llama-server "
                                           "--list-devices` shows them",
                                           projector_gpu),
                               ExitCode::usage});
      }
      if (!chosen->empty()) {
        budget.projector_gpu = chosen->front();
      }
    }
  }
  // Over RPC the budgets are per node: the head's MemAvailable and GPUs go to the node plan,
  // the one-machine plan only sizes the buffers.
  const bool over_rpc = !endpoints.empty();
  const std::optional<std::uint64_t> head_available = budget.mem_available;
  std::vector<plan::GpuBudget> head_gpus;
  if (over_rpc) {
    head_gpus = std::move(budget.gpus);
    budget.gpus.clear();
    if (config.backend == plan::PlanBackend::cuda && head_gpus.empty() && inputs.gb10) {
      // GB10's integrated GPU: llama.cpp splits by its free memory, which is MemAvailable (K19).
      head_gpus.push_back(plan::GpuBudget{"CUDA0", "GB10 (integrated)", head_available, 0});
    }
    budget.mem_available.reset();
  }
  auto plan = plan::make_plan(*facts, config, budget);
  if (plan && settings.integer("cache_ram_mib") < 0 && !plan->estimate) {
    plan = plan_unbounded_cache(*facts, config, budget, *plan, inputs.gb10);
  }
  if (!plan) {
    return fail(ctx, plan.error());
  }

  // The fit: when the plan does not fit (or --fit), lower the knobs in the profile's order.
  std::optional<report::FitSummary> fit;
  const auto fit_mode = settings.text("fit");
  if ((plan->devices ? plan->devices->budgets_known : plan->available_bytes.has_value()) &&
      !in.force && fit_mode != "off" && (fit_mode == "on" || !plan->fits)) {
    fit.emplace();
    fit->mode = fit_mode;
    fit->priority = settings.text_list("fit_priority");
    plan::FitRequest request;
    request.asked = {built->command.ctx_per_slot, built->command.slots, config.cache_ram_bytes};
    request.priority.clear();
    for (const auto& name : fit->priority) {
      request.priority.push_back(*plan::parse_fit_knob(name));  // checked with the profile
    }
    for (const plan::FitKnob knob : plan::kDefaultFitPriority) {
      // auto: only what the command line did not set.
      request.adjustable[static_cast<std::size_t>(knob)] =
          fit_mode == "on" || settings.at(plan::fit_knob_key(knob)).source != "command line";
    }
    if (settings.integer("cache_ram_mib") < 0) {
      request.adjustable[static_cast<std::size_t>(plan::FitKnob::cache_ram)] = false;
    }
    const auto* kvu = flags->find("-kvu");
    const bool build_has_kvu = kvu != nullptr && !kvu->removed();
    const auto kvu_mode = settings.text("kv_unified");
    request.configure = [&](const plan::FitKnobs& knobs) {
      plan::PlanConfig c = config;
      c.slots = knobs.slots;
      c.ctx_total = knobs.ctx_per_slot * knobs.slots;
      c.kv_unified = build_has_kvu && (kvu_mode == "on" || (kvu_mode == "auto" && knobs.slots > 1));
      c.cache_ram_bytes = knobs.cache_ram_bytes;
      return c;
    };
    const auto fitted = plan::fit_plan(*facts, request, budget);
    if (!fitted && fitted.error().code != ExitCode::memory_refused) {
      return fail(ctx, fitted.error());
    }
    if (!fitted) {
      fit->failed = fitted.error().message;
    } else if (!fitted->given_up.empty()) {
      launch::SettingsLayer layer{"fit (memory)", nlohmann::json::object()};
      for (const plan::FitChange& change : fitted->given_up) {
        const auto name = std::string(plan::fit_knob_key(change.knob));
        fit->given_up_from.push_back(settings.at(name).source);
        layer.values[name] =
            change.knob == plan::FitKnob::cache_ram ? change.chosen >> 20 : change.chosen;
      }
      fit->given_up = fitted->given_up;
      settings = resolve(layers, &*profile, in, &layer);
      built = build(settings);
      if (!built) {
        return fail(ctx, built.error());
      }
      config = configure(settings, built->command);
      plan = plan::make_plan(*facts, config, budget);
      if (!plan) {
        return fail(ctx, plan.error());
      }
    }
  }

  if (!in.print.empty()) {
    // Not over RPC: the workers are not contacted for an export, so the node plan is not
    // checked there (launch --rpc --dry-run checks it).
    const bool known =
        plan->devices ? plan->devices->budgets_known : plan->available_bytes.has_value();
    if (!over_rpc && known && !plan->fits && !in.force) {
      return fail(ctx, Error{"the plan does not fit in memory; nothing was printed. " +
                                 report::what_fits(config, *plan) + " (--force prints it anyway)",
                             ExitCode::memory_refused});
    }
    if (fit && !fit->given_up.empty()) {
      for (const auto& line : report::describe_fit_changes(*fit)) {
        *ctx.err << "gb10tune launch: to fit in memory, lowered " << line << "\n";
      }
    }
    warn_all(*built);
    return print_export(*built);
  }

  std::optional<report::RpcPreview> rpc_preview;
  if (over_rpc) {
    auto workers = contact_workers(endpoints, rpc::kKnownVersion, workers_in_use(ctx), *ctx.err);
    if (!workers) {
      return fail(ctx, workers.error());
    }
    rpc_preview.emplace();
    rpc_preview->head_version = rpc::kKnownVersion;
    rpc_preview->workers = *workers;
    rpc::NodeBudgets nodes;
    nodes.workers = std::move(*workers);
    nodes.worker_reserve_bytes = *rpc_reserve;
    nodes.head_mem_available = head_available;
    nodes.head_reserve_bytes = *reserve;
    nodes.head_devices = head_gpus;
    plan->per_node = true;
    rpc_preview->nodes = rpc::plan_nodes(*facts, config, *plan, nodes);
    for (const rpc::Endpoint& endpoint : endpoints) {
      auto argv = worker_argv_for(endpoint);
      rpc_preview->worker_argv.push_back(argv ? *argv : std::vector<std::string>{});
      rpc_preview->worker_start.push_back(
          fmt::format("gb10tune rpc start --host {} --port {} --cache{}", endpoint.host,
                      endpoint.port, binds_every_interface(endpoint.host) ? " --expose" : ""));
    }
    if (!rpc_preview->nodes.budgets_known) {
      *ctx.err << "warning: a node's memory is unknown; the plan per node is not checked\n";
    }
  }

  report::LaunchPreview preview;
  preview.model = &*facts;
  for (const auto& shard : candidate->shards) {
    preview.model_files.push_back(shard.string());
  }
  preview.mmproj_path = *mmproj;
  preview.projector_bytes = plan->projector_bytes + plan->projector_compute_bytes;
  preview.server_path = *server_path;
  preview.profile = layers.profile;
  preview.profile_reason = layers.profile_reason;
  preview.settings = &settings;
  preview.command = &built->command;
  preview.config = &config;
  preview.plan = &*plan;
  preview.environment = &built->environment;
  preview.rules = &built->rules;
  preview.fit = fit ? &*fit : nullptr;
  preview.calibration_key = key;
  preview.rpc = rpc_preview ? &*rpc_preview : nullptr;

  const bool checked = rpc_preview     ? rpc_preview->nodes.budgets_known
                       : plan->devices ? plan->devices->budgets_known
                                       : plan->available_bytes.has_value();
  const bool fits = rpc_preview ? rpc_preview->nodes.fits : plan->fits;
  const bool refused = checked && !fits && !in.force;
  if (in.dry_run || refused) {
    // A refusal is said on stderr, and in the document with the plan it refused.
    const std::string refusal =
        !refused      ? std::string()
        : rpc_preview ? "the plan does not fit on every node; nothing was started. " +
                            report::rpc_refusal(rpc_preview->nodes) + " (--force starts it anyway)"
                      : "the plan does not fit in memory; nothing was started. " +
                            report::what_fits(config, *plan) + " (--force starts it anyway)";
    if (in.json) {
      auto doc = report::launch_to_json(preview);
      doc["dry_run"] = in.dry_run;
      if (refused) {
        report::add_failure(doc, to_int(ExitCode::memory_refused), refusal);
      }
      *ctx.out << report::dump_document(doc);
    } else {
      *ctx.out << report::render_launch_text(preview, ctx.out_style(), in.explain);
    }
    if (refused) {
      *ctx.err << "gb10tune launch: " << refusal << "\n";
      return ExitCode::memory_refused;
    }
    return ExitCode::ok;
  }
  if (in.explain && !in.json) {
    *ctx.out << report::render_launch_text(preview, ctx.out_style(), true);
  } else {
    if (fit && !fit->given_up.empty()) {
      for (const auto& line : report::describe_fit_changes(*fit)) {
        *ctx.err << "gb10tune launch: to fit in memory, lowered " << line << "\n";
      }
    }
    warn_all(*built);
  }
  return session->start(preview, settings, in.json);
}

// Adds the option of every launch setting that takes one: its names, help (with the default
// and the range), and value text all come from the setting's spec, so that --help cannot
// drift from what launch does. The value goes to `o->values` and is checked against the spec
// with the rest of the command line, exactly as a profile's value is.
void add_setting_options(CLI::App& sub, const std::shared_ptr<LaunchOptions>& o) {
  for (const launch::SettingSpec& spec : launch::launch_setting_specs()) {
    if (spec.option.empty()) {
      continue;
    }
    const std::string key(spec.key);
    const std::string names(spec.option);
    CLI::Option* option =
        spec.kind == launch::SettingKind::integer
            ? sub.add_option_function<std::int64_t>(
                  names, [o, key](std::int64_t value) { o->values[key] = value; },
                  launch::setting_help(spec))
            : sub.add_option_function<std::string>(
                  names, [o, key](const std::string& value) { o->values[key] = value; },
                  launch::setting_help(spec));
    option->option_text(launch::setting_value_text(spec));
  }
}

}  // namespace

Runner setup_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* sub = app.add_subcommand(
      "launch",
      "Start llama-server for a model, the way the tuning report found best: read the model's "
      "GGUF header and this llama-server's --help, plan memory exactly against MemAvailable, "
      "clean the environment (no GGML_CUDA_ENABLE_UNIFIED_MEMORY), start it and wait until it "
      "is ready.");
  sub->add_flag("--dry-run", o->dry_run,
                "Print the plan, the environment and the command; "
                "start nothing");
  sub->add_flag("--json", o->json, "Print one JSON document instead of text");
  sub->add_flag("--explain", o->explain,
                "Also show where every setting came from and why every option is there");
  sub->add_flag("--force", o->force,
                "Go on past refusals (memory, missing options, K6), each shown as a warning; "
                "with --overhead SIZE, start an architecture gb10tune has no layer rules for, "
                "planned as an estimate (weights + SIZE)");
  sub->add_option("--backend", o->backend,
                  "Plan the buffers of this backend: auto (from the llama-server build and the "
                  "machine), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->option_text("auto|cpu|cuda");
  sub->add_option("--gpu-reserve", o->gpu_reserve,
                  "Memory kept free on each discrete GPU (default 1GiB, as llama.cpp's own fit)")
      ->option_text("SIZE");
  sub->add_option("--rpc", o->rpc,
                  "Spread the model over llama.cpp RPC workers (rpc-server): each is asked for "
                  "its protocol version and memory, and the plan is checked per machine")
      ->option_text("HOST:PORT[,HOST:PORT…]");
  sub->add_option("--rpc-reserve", o->rpc_reserve,
                  "Memory kept free on each RPC worker (default 1GiB, as llama.cpp's own fit)")
      ->option_text("SIZE");
  sub->add_option("--print", o->print,
                  "Print a systemd unit, llama-swap's model entry or a router preset section for "
                  "the same command; "
                  "start nothing")
      ->check(CLI::IsMember({"systemd", "llama-swap", "preset"}))
      ->option_text("systemd|llama-swap|preset");
  sub->add_option("--profile", o->profile,
                  "gb10-dense-mtp, gb10-moe, single-slot, or a JSON file (default: by model)")
      ->option_text("NAME|FILE");
  add_setting_options(*sub, o);
  sub->add_flag_callback(
      "--no-mmproj", [o] { o->values["mmproj"] = "none"; }, "No projector, even if one is there");
  sub->add_flag_callback(
      "--no-mmproj-offload", [o] { o->values["mmproj_offload"] = false; },
      "Keep the projector's weights and compute buffer in host memory (llama-server "
      "--no-mmproj-offload)");
  sub->add_option_function<std::int64_t>(
         "--ctx-size,-c", [o](std::int64_t value) { o->ctx_size = value; },
         "Context tokens of all slots together (sets --ctx-per-slot = this / slots; 0 = the "
         "model's native context per slot)")
      ->option_text("N");
  sub->add_flag_callback(
      "--kvu", [o] { o->values["kv_unified"] = "on"; }, "One KV pool for all slots (-kvu)");
  sub->add_flag_callback(
      "--no-kvu", [o] { o->values["kv_unified"] = "off"; }, "One KV stream per slot");
  sub->add_flag_callback(
      "--mtp", [o] { o->values["mtp"] = "on"; }, "draft-mtp speculative decoding");
  sub->add_flag_callback(
      "--no-mtp", [o] { o->values["mtp"] = "off"; }, "No speculative decoding");
  sub->add_flag_callback(
      "--swa-full", [o] { o->values["swa_full"] = true; }, "Full-size sliding-window cache");
  sub->add_flag_callback(
      "--fit", [o] { o->values["fit"] = "on"; },
      "Lower context per slot, slots and prompt cache (in fit_priority order) until the plan "
      "fits; without it only what the command line did not set is lowered");
  sub->add_flag_callback(
      "--no-fit", [o] { o->values["fit"] = "off"; },
      "Refuse (exit 3) instead of lowering anything when the plan does not fit");
  sub->add_option("args", o->extra, "After --: further llama-server arguments");
  sub->footer(
      "Settings: built-in < profile < $XDG_CONFIG_HOME/gb10tune/config.json < command line; "
      "--explain shows each value's source.\n" +
      exit_code_footer(
          {{ExitCode::ok, "started (or planned)"},
           {ExitCode::failed,
            "a server that launch started still runs, or another launch holds the lock"},
           {ExitCode::usage,
            "usage error or refused (also an RPC worker of another protocol version)"},
           {ExitCode::memory_refused, "memory refused (also on one RPC node)"},
           {ExitCode::server_failed,
            "the server failed to start or become ready (also an RPC worker that does not "
            "answer)"},
           {ExitCode::interrupted, "interrupted (SIGINT), the server stopped"},
           {ExitCode::terminated, "terminated (SIGTERM), the server stopped"}}));
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
