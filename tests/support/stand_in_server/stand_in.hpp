// The stand-in llama-server used by the tests: shared declarations of its three parts
// (argument parsing, HTTP endpoints, the main program). It imitates llama-server of
// llama.cpp commit 3f545be (2026-08) closely enough for launch, verify and bench to be
// tested without a GPU or a model; see tests/support/stand_in_server/main.cpp for the
// environment variables that steer it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace standin {

// One option of a llama-server build, as its --help text describes it.
struct OptionInfo {
  bool takes_value = false;  // a placeholder follows the names ("N", "[on|off|auto]", ...)
  std::string removed;       // for removed options: the advice after "the argument has been
                             // removed. " (using such an option is an error)
  std::string usage;         // the option's lines of the help text
};

// The options a build accepts: every alias ("-c", "--ctx-size") -> its description.
using OptionTable = std::map<std::string, OptionInfo>;

// Collects the options of a --help text: lines that start with '-' list comma-separated
// names, optionally followed by a value placeholder ("-c,    --ctx-size N"). Never fails;
// lines it does not understand are skipped.
OptionTable parse_help_options(std::string_view help_text);

// What the command line (and the LLAMA_ARG_* fallbacks) asked of the server.
struct ServerArgs {
  std::string host = "127.0.0.1";
  int port = 8080;
  int n_parallel = -1;             // -1 = auto: 4 slots and a unified KV pool
  std::uint64_t ctx_size = 0;      // 0 = the model's training context
  std::optional<bool> kv_unified;  // -kvu / -no-kvu; unset follows -np
  std::string spec_type;           // empty or "none" = no speculative decoding
  int spec_draft_n_max = 3;
  std::string model_path;
  std::string alias;
  bool metrics = false;
  bool help = false;
  bool version = false;
};

// Parses argv like llama-server does: unknown options and missing values are errors whose
// text is what the real server prints ("error: invalid argument: --foo"). `env` supplies
// the LLAMA_ARG_* fallbacks; the command line wins. Returns the error text on failure.
std::optional<std::string> parse_args(const std::vector<std::string>& argv,
                                      const OptionTable& options,
                                      const std::map<std::string, std::string>& env,
                                      ServerArgs& out);

// The model's training context the stand-in pretends to have loaded.
inline constexpr std::uint64_t kTrainContext = 262144;

// Slots actually created for `args` (-np -1 -> 4).
int total_slots(const ServerArgs& args);
// The context one slot sees: the whole pool (capped at the training context) when the KV
// cache is unified, else an equal share.
std::uint64_t slot_context(const ServerArgs& args);
// True when --spec-type names a speculative method.
bool speculative(const ServerArgs& args);

// State shared between the loader (main) and the HTTP handlers.
struct Shared {
  std::atomic<bool> ready{false};
  std::atomic<int> busy{0};
  std::atomic<std::uint64_t> requests{0};
  std::vector<nlohmann::json> timings;  // cycled through, one per completion
  int response_delay_ms = 0;
  std::string build_info;
};

}  // namespace standin

namespace httplib {
class Server;
}

namespace standin {

// Registers /health, /props, /slots, /metrics, /completion and /v1/chat/completions.
void install_routes(httplib::Server& server, const ServerArgs& args, Shared& shared);

}  // namespace standin
