// What `gb10tune launch` was asked on its command line, before any file is read: the settings
// it gave, the profile, the workers and the llama-server arguments after --, checked and put
// in one form (projector and --rpc arguments after -- lifted into launch's own settings).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gb10tune/platform/environment.hpp"
#include "gb10tune/rpc/rpc_protocol.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// What the command line asks of a launch; unset parts leave the value to the lower layers.
struct LaunchRequest {
  nlohmann::json values = nlohmann::json::object();  // settings given (key → value)
  std::optional<std::int64_t> ctx_size;  // -c: all slots together (becomes ctx_per_slot)
  std::string profile;                   // --profile: a name or a file; "" = by user config/model
  std::string backend = "auto";          // --backend: auto, cpu or cuda
  std::string rpc;                       // --rpc HOST:PORT[,…]: the workers
  std::vector<std::string> extra;        // llama-server arguments after --
  bool force = false;                    // go on past refusals
};

// How sure a note of the planner is: what it did (info) or what it could not do (warning).
enum class NoteKind { info, warning };

// Where the planner says what it went on past, in order (the CLI prints them on stderr).
using NoteSink = std::function<void(NoteKind, const std::string&)>;

// Puts `request` in one form and returns the RPC workers' endpoints (none without --rpc):
// llama-server's projector options after -- (-mm/--mmproj FILE, --mmproj=FILE,
// --[no-]mmproj-offload) become settings and its --rpc becomes launch's own; LLAMA_ARG_RPC in
// `env` is taken as --rpc when the command line has none (a note says so); the workers are
// appended to the arguments as one --rpc list, the arguments kept as the extra_args setting;
// every value is checked as a profile's would be. A usage Error for a word before -- that is
// not an option, an argument that contradicts launch's own, a bad --rpc list or a bad value.
Expected<std::vector<rpc::Endpoint>> normalize_request(LaunchRequest& request,
                                                       const platform::Environment& env,
                                                       const NoteSink& note);

}  // namespace gb10tune::launch
