#include "gb10tune/launch/launch_export.hpp"

#include <fmt/format.h>

#include "gb10tune/launch/launch_rpc.hpp"
#include "gb10tune/launch/server_exports.hpp"
#include "gb10tune/util/systemd_syntax.hpp"

namespace gb10tune::launch {

namespace {

// One unit per node: the head's here, each worker's for its own machine (started first).
Expected<std::string> systemd_units(const ExportInputs& in) {
  SystemdUnit unit;
  unit.argv = in.replan.empty() ? in.built->command.argv : in.replan;
  // Re-planning, gb10tune cleans the environment itself at each start (and says so).
  unit.unset_env = in.replan.empty() ? variables_to_unset(*in.built) : std::vector<std::string>{};
  unit.description =
      fmt::format("llama-server ({}) planned by gb10tune{}", in.model.filename().string(),
                  in.replan.empty() ? "" : " at each start");
  if (!in.workers.empty()) {
    unit.description += fmt::format(" over RPC workers {}", in.rpc);
  }
  auto head = render_systemd_unit(unit);
  if (!head || in.workers.empty()) {
    return head;
  }
  std::string text =
      systemd::comment_line(
          "node: head (this machine), e.g. /etc/systemd/system/llama-server.service") +
      *head;
  for (const rpc::Endpoint& endpoint : in.workers) {
    auto argv = worker_command(endpoint);
    if (!argv) {
      return argv.error();
    }
    SystemdUnit worker_unit;
    worker_unit.argv = std::move(*argv);
    worker_unit.unset_env = {"GGML_CUDA_ENABLE_UNIFIED_MEMORY"};
    worker_unit.description =
        fmt::format("llama.cpp RPC worker on {} for gb10tune", endpoint.to_string());
    auto worker = render_systemd_unit(worker_unit);
    if (!worker) {
      return worker.error();
    }
    text += "\n" +
            systemd::comment_line(fmt::format(
                "node: RPC worker {} (on that machine; give ExecStart the full path of its "
                "ggml-rpc-server), e.g. /etc/systemd/system/ggml-rpc-server-{}.service",
                endpoint.to_string(), endpoint.port)) +
            *worker;
  }
  return text;
}

}  // namespace

Expected<std::string> render_launch_export(const std::string& kind, const ExportInputs& in) {
  if (kind == "preset" && !in.replan.empty()) {
    return Error{
        "--print preset has only the frozen form: llama-server's router starts the model's server "
        "itself, with the preset's options, so gb10tune cannot plan at its start; use --form "
        "frozen (or leave --form out) with --print preset",
        ExitCode::usage};
  }
  if (kind == "preset") {
    return render_models_preset(in.model.stem().string(), in.built->command.argv, *in.flags);
  }
  if (kind == "llama-swap") {
    LlamaSwapEntry entry;
    entry.name = in.model.stem().string();
    entry.argv = in.replan.empty() ? in.built->command.argv : in.replan;
    if (in.replan.empty()) {
      entry.unset_env = variables_to_unset(*in.built);
    }
    return render_llama_swap_entry(entry);
  }
  if (kind == "systemd") {
    return systemd_units(in);
  }
  return Error{fmt::format("--print {}: not one of systemd, llama-swap, preset", kind),
               ExitCode::usage};
}

}  // namespace gb10tune::launch
