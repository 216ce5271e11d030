// launch --print: the planned command (after the fit) for another supervisor, instead of
// starting it: a systemd unit (one per node over RPC), llama-swap's model entry, or a router
// preset section.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "gb10tune/launch/built_command.hpp"
#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What an export is made of.
struct ExportInputs {
  std::filesystem::path model;  // the model file (-m): names the entry and the unit
  const BuiltCommand* built = nullptr;
  const server::ServerFlags* flags = nullptr;  // the build's options, for a preset's keys
  std::vector<rpc::Endpoint> workers;          // over RPC: a unit for each worker too
  std::string rpc;                             // the --rpc list as given, for a description
  // The re-planning form (replan_command.hpp): what the supervisor runs instead of the planned
  // command (the head's, over RPC); empty = the frozen form, the planned command itself.
  std::vector<std::string> replan;
};

// The text of export `kind` ("systemd", "llama-swap" or "preset"), in the re-planning form when
// inputs.replan is set. A usage Error for another kind or for a preset asked to re-plan (the
// router runs llama-server itself), and the Errors of the renderers (server_exports.hpp) for
// what a field cannot carry.
Expected<std::string> render_launch_export(const std::string& kind, const ExportInputs& inputs);

}  // namespace gb10tune::launch
