// What `gb10tune tune` may change, as data: per knob the launch setting it sets, the
// llama-server option behind it, whether a build can take it per request, whether it changes
// the plan's memory and whether it changes the output, and from the model, the machine and the
// goal the values worth measuring.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::tune {

// What a tune optimizes.
enum class Goal {
  decode,      // one session's decode t/s on the workload (default)
  throughput,  // the total decode t/s of N concurrent sessions
  prefill,     // the time to the first token (lower is better)
};

// "decode", "throughput", "prefill".
std::string_view to_string(Goal goal);

// to_string's text back to the goal (--goal, the journal); nullopt for any other text.
std::optional<Goal> parse_goal(std::string_view text);

// How a knob's value reaches the server.
enum class ApplyMode {
  restart,      // a llama-server option: the server is restarted with it
  per_request,  // a request field this build accepts: sent with each request, no restart
};

// "restart", "per request".
std::string_view to_string(ApplyMode mode);

// One knob: a launch setting tune may change.
struct Knob {
  std::string_view setting;        // the launch setting key ("draft_n_max")
  std::string_view server_option;  // the llama-server option it becomes ("--spec-draft-n-max")
  // The request field a build may accept instead ("speculative.n_max"); "" when none.
  std::string_view request_field;
  bool memory_effect = false;  // changes the memory plan (every candidate is planned then)
  bool lossy = false;          // changes the output: measured only with --allow-lossy
  std::string_view help;       // one line for --help and the report
  // The tuning rule (server::check_rules id) whose advice a value of this knob may contradict,
  // and the option as the rules read it ("-fa"); "" when no rule is about it. A tuned profile's
  // measurement of the knob outranks that rule (tuned_profile.hpp).
  std::string_view rule = "";
  std::string_view rule_option = "";
};

// Every knob, in the order a search visits them (the largest effects first, as the report
// found them: draft depth before p_min before the micro-batch …).
const std::vector<Knob>& knob_table();

// The knob of setting `setting`; nullptr when none.
const Knob* find_knob(std::string_view setting);

// What decides which knobs apply and their candidate values.
struct KnobContext {
  Goal goal = Goal::decode;
  int concurrency = 1;       // sessions for Goal::throughput
  bool allow_lossy = false;  // --allow-lossy
  bool speculative = false;  // the server drafts (an MTP head in use, or a draft model)
  bool work_on_cpu = false;  // layers or work stay on the CPU (CPU backend, partial offload)
  int cpu_cores = 0;         // physical cores of this machine (0: unknown)
  // The running build's /props (default_generation_settings.params lists the request fields it
  // takes); null: not known, every knob is applied by restart.
  nlohmann::json props;
  nlohmann::json current = nlohmann::json::object();  // the current settings (key → value)
};

// A knob as this tune will search it.
struct KnobPlan {
  const Knob* knob = nullptr;
  ApplyMode mode = ApplyMode::restart;
  // The values to measure, the current one first, then outward (the next larger, …; then the
  // next smaller, …); for a choice (on/off) the current then the others.
  std::vector<nlohmann::json> values;
  bool ordered = true;  // values have an order (a search walks it); false: a choice
  // Why a knob of the table is not searched ("no draft model or MTP head", "lossy: pass
  // --allow-lossy"); "" when it is.
  std::string skipped;
};

// Every knob of the table with its plan for `context`, in table order (skipped ones included,
// with their reason, so that the report can say why).
std::vector<KnobPlan> plan_knobs(const KnobContext& context);

// Keeps only the knobs named in `only` (--knobs; empty keeps all): the others are skipped as
// "not among --knobs". A name that is no knob's setting is an Error (ExitCode::usage) listing
// the knobs; a named knob skipped for its own reason stays skipped with it.
Status restrict_knobs(std::vector<KnobPlan>& plans, const std::vector<std::string>& only);

// Whether this build takes `knob` per request: its request_field is listed in `props`'
// default_generation_settings.params (3f545be lists only speculative.types: restart).
bool accepts_per_request(const Knob& knob, const nlohmann::json& props);

}  // namespace gb10tune::tune
