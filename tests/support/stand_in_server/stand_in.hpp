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

#include "gb10tune/server/server_flags.hpp"

namespace standin {

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
  std::uint64_t n_ctx_train = 262144;  // the model's training context (from its header)
  bool spec_init_failed = false;       // STANDIN_SPEC_FAILS=1: runs without a draft context
  bool metrics = false;
  bool help = false;
  bool version = false;
};

// Parses argv like llama-server does (the accepted options come from the --help text): unknown
// options and missing values are errors whose text is what the real server prints ("error: invalid
// argument: --foo"). `env` supplies the LLAMA_ARG_* fallbacks; the command line wins. Returns the
// error text on failure.
std::optional<std::string> parse_args(const std::vector<std::string>& argv,
                                      const gb10tune::server::ServerFlags& options,
                                      const std::map<std::string, std::string>& env,
                                      ServerArgs& out);

// Slots actually created for `args` (-np -1 -> 4).
int total_slots(const ServerArgs& args);
// The context one slot sees, as llama-server 3f545be computes it: -c (0: the training
// context per stream) rounded up to 256; per stream an equal share rounded up to 256 unless
// the pool is unified; capped at the training context.
std::uint64_t slot_context(const ServerArgs& args);
// True when --spec-type names a speculative method: the slots then have a draft context
// (unless its initialisation failed).
bool speculative(const ServerArgs& args);

// State shared between the loader (main) and the HTTP handlers.
struct Shared {
  std::atomic<bool> ready{false};
  std::atomic<int> busy{0};
  std::atomic<std::uint64_t> requests{0};
  std::vector<nlohmann::json> timings;  // cycled through, one per completion
  int response_delay_ms = 0;
  std::string build_info;
  std::optional<double> speed;  // STANDIN_SPEED's factor for this command line; nullopt: unset
  int bytes_per_token = 4;      // STANDIN_TOKEN_BYTES: /tokenize's one token per this many bytes
  bool check_context = false;   // STANDIN_TOKEN_BYTES given: a prompt as long as a slot is refused
  bool no_tokenize = false;     // STANDIN_NO_TOKENIZE=1: no /tokenize, no /apply-template (404)
};

// STANDIN_SPEED's factor for `argv` (see speed.cpp); nullopt when the variable is not set.
std::optional<double> speed_factor(const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& argv);

// The timings of completion number `index` of `body` at `factor` times the stand-in's speed.
nlohmann::json speed_timings(double factor, const nlohmann::json& body, std::uint64_t index);

}  // namespace standin

namespace httplib {
class Server;
}

namespace standin {

// Registers /health, /props, /slots, /metrics, /apply-template, /tokenize, /completion and
// /v1/chat/completions.
void install_routes(httplib::Server& server, const ServerArgs& args, Shared& shared);

}  // namespace standin
