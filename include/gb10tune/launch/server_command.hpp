// The llama-server command line for a model, a machine and one llama-server build: the
// launch rules (K-facts as data) applied to the resolved settings, each option checked
// against the build's --help and adapted to what it accepts (K15).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gb10tune/launch/profile.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/server/server_flags.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::launch {

// One launch rule: why an option is on the command line.
struct LaunchRule {
  std::string_view id;      // "all-layers-on-gpu"
  std::string_view fact;    // "K1"; "" for plain settings
  std::string_view why;     // one line for --explain
  std::string_view option;  // launch's own option that sets it ("--gpu-layers"); "" for none
};

// Every launch rule, in command-line order.
const std::vector<LaunchRule>& launch_rules();

// The launch rule `id`, or nullptr.
const LaunchRule* find_launch_rule(std::string_view id);

// Part of the command line and the rule that put it there.
struct ArgvPiece {
  std::vector<std::string> args;
  std::string_view rule;  // a LaunchRule id
};

// What the command is built from.
struct CommandInputs {
  std::string server_path;  // argv[0]
  std::string model_path;
  std::string mmproj_path;  // "" = no projector
  bool gb10 = false;        // K19: no mmap loading
  bool force = false;       // go on past refusals (each becomes a warning)
};

// The command and what was decided on the way.
struct ServerCommand {
  std::vector<std::string> argv;         // argv[0] = the server binary
  std::vector<ArgvPiece> pieces;         // argv[1…] by rule
  std::vector<std::string> adaptations;  // how options were fitted to this build
  std::vector<std::string> warnings;     // refusals passed with --force, risky choices
  std::string context_capped;  // why the context per slot was capped at the training one; ""

  // The values the plan needs.
  bool mtp = false;
  std::uint32_t slots = 1;
  std::uint64_t ctx_total = 0;  // -c
  std::uint64_t ctx_per_slot = 0;
  bool kv_unified = false;
  std::uint32_t draft_n_max = 0;
  std::int64_t cache_ram_mib = 0;
  std::uint32_t gpu_layers = 0;
};

// Builds the command. Refusals (exit code usage unless `force`): MTP asked for on a model
// without the head; an option the build lacks with no equivalent (the message names the
// option and the build needed); an extra argument that is unknown to the build, removed,
// changes what the memory plan sizes, or overrides a planned option (the message names the
// planned option's rule, its fact and launch's own option for it). The tuning rules on the
// finished command are judge_command's (rule_verdict.hpp).
Expected<ServerCommand> build_server_command(const LaunchSettings& settings,
                                             const model::ModelFacts& model,
                                             const server::ServerFlags& flags,
                                             const CommandInputs& inputs);

}  // namespace gb10tune::launch
