#include "gb10tune/tune/knobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "gb10tune/launch/setting_specs.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

namespace {

using nlohmann::json;

// The largest draft depth and slot count a search proposes by itself.
constexpr int kMaxDraftDepth = 8;
constexpr int kMaxSlots = 256;

// The current value of `key`: the context's, else the launch setting's built-in default, else
// `fallback` (what llama-server does when the option is not given).
json knob_current(const KnobContext& context, std::string_view key, json fallback) {
  const std::string name(key);
  if (context.current.is_object() && context.current.contains(name) &&
      !context.current[name].is_null()) {
    return context.current[name];
  }
  if (const launch::SettingSpec* spec = launch::find_setting_spec(key)) {
    return spec->built_in;
  }
  return fallback;
}

// `current` first, then the larger of `candidates` ascending, then the smaller descending; each
// value once.
std::vector<json> outward(const json& current, std::vector<json> candidates) {
  const auto number = [](const json& v) { return v.get<double>(); };
  std::sort(candidates.begin(), candidates.end(),
            [&](const json& l, const json& r) { return number(l) < number(r); });
  candidates.erase(
      std::unique(candidates.begin(), candidates.end(),
                  [&](const json& l, const json& r) { return number(l) == number(r); }),
      candidates.end());
  const double here = number(current);
  std::vector<json> values{current};
  std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(values),
               [&](const json& v) { return number(v) > here; });
  std::copy_if(candidates.rbegin(), candidates.rend(), std::back_inserter(values),
               [&](const json& v) { return number(v) < here; });
  return values;
}

// `current` first, then the other `choices` in their order.
std::vector<json> choice_values(const json& current, const std::vector<json>& choices) {
  std::vector<json> values{current};
  for (const json& c : choices) {
    if (std::find(values.begin(), values.end(), c) == values.end()) {
      values.push_back(c);
    }
  }
  return values;
}

std::vector<json> integer_range(std::int64_t low, std::int64_t high) {
  std::vector<json> out;
  for (std::int64_t v = low; v <= high; ++v) {
    out.emplace_back(v);
  }
  return out;
}

// Why `knob` is not searched in `context`; "" when it is.
std::string skip_reason(const Knob& knob, const KnobContext& context) {
  const std::string_view key = knob.setting;
  const bool drafting = key == "draft_n_max" || key == "draft_p_min" || key == "mtp";
  if (drafting && !context.speculative) {
    return "the server does not draft (no MTP head or draft model in use)";
  }
  if (drafting && context.goal == Goal::prefill) {
    return "drafting does not change the time to the first token";
  }
  if (key == "slots" && context.goal != Goal::throughput) {
    return "only for --goal throughput (one session uses one slot)";
  }
  if (key == "threads" && !context.work_on_cpu) {
    return "no layer and no work stays on the CPU";
  }
  if (key == "threads" && context.cpu_cores <= 0) {
    return "the number of CPU cores is unknown";
  }
  if (knob.lossy && !context.allow_lossy) {
    return "lossy (a quantized KV cache changes the output): pass --allow-lossy to measure it";
  }
  return "";
}

// The values of `knob` in `context`, current first; `ordered` false for a choice.
std::vector<json> knob_values(const Knob& knob, const KnobContext& context, bool& ordered) {
  const std::string_view key = knob.setting;
  ordered = true;
  if (key == "draft_n_max") {
    const json current = knob_current(context, key, 3);
    const std::int64_t top = std::max<std::int64_t>(kMaxDraftDepth, current.get<std::int64_t>());
    return outward(current, integer_range(1, top));
  }
  if (key == "draft_p_min") {
    return outward(knob_current(context, key, 0.0), {0.0, 0.5, 0.75, 0.9});
  }
  if (key == "ubatch") {
    return outward(knob_current(context, key, 512), {128, 256, 512, 1024, 2048});
  }
  if (key == "slots") {
    const std::int64_t c = std::clamp(context.concurrency, 1, kMaxSlots);
    return outward(knob_current(context, key, c),
                   integer_range(c, std::min<std::int64_t>(2 * c, kMaxSlots)));
  }
  if (key == "threads") {
    const int cores = context.cpu_cores;
    json current = knob_current(context, key, cores);
    if (!current.is_number() || current.get<double>() <= 0) {
      current = cores;  // llama-server's default (-1): one thread per core
    }
    return outward(current, {std::max(1, cores / 2), std::max(1, cores - 1), cores});
  }
  ordered = false;
  if (key == "mtp") {
    return choice_values(knob_current(context, key, "auto"), {json("off")});
  }
  if (key == "flash_attn") {
    return choice_values(knob_current(context, key, "auto"), {json("on"), json("off")});
  }
  return choice_values(knob_current(context, key, "f16"),
                       {json("f16"), json("q8_0")});  // the cache types
}

}  // namespace

std::string_view to_string(Goal goal) {
  switch (goal) {
    case Goal::decode:
      return "decode";
    case Goal::throughput:
      return "throughput";
    case Goal::prefill:
      return "prefill";
  }
  return "unknown";
}

std::string_view to_string(ApplyMode mode) {
  return mode == ApplyMode::per_request ? "per request" : "restart";
}

std::optional<Goal> parse_goal(std::string_view text) {
  for (const Goal goal : {Goal::decode, Goal::throughput, Goal::prefill}) {
    if (to_string(goal) == text) {
      return goal;
    }
  }
  return std::nullopt;
}

const std::vector<Knob>& knob_table() {
  static const std::vector<Knob> knobs = {
      {"draft_n_max", "--spec-draft-n-max", "speculative.n_max", true, false,
       "tokens drafted per step (K4): deeper drafts pay off while acceptance stays high",
       "draft-n-max-4", "--spec-draft-n-max"},
      {"draft_p_min", "--spec-draft-p-min", "speculative.p_min", false, false,
       "the least probability a drafted token needs to be kept drafting"},
      {"mtp", "--spec-type", "", true, false,
       "drafting at all: a draft that is rarely accepted costs more than it saves",
       "mtp-when-model-has-head", "--spec-type"},
      {"ubatch", "--ubatch-size", "", true, false,
       "physical batch size: the prompt's chunk and the compute buffers' size"},
      {"flash_attn", "--flash-attn", "", true, false, "flash attention", "flash-attention-on",
       "-fa"},
      {"slots", "--parallel", "", true, false, "parallel slots: the sessions served at once (K10)"},
      {"threads", "--threads", "", false, false,
       "CPU threads for the layers and the work left on the CPU"},
      {"cache_type_k", "--cache-type-k", "", true, true, "K cache type: q8_0 halves it (lossy)"},
      {"cache_type_v", "--cache-type-v", "", true, true, "V cache type: q8_0 halves it (lossy)"},
  };
  return knobs;
}

const Knob* find_knob(std::string_view setting) {
  for (const Knob& knob : knob_table()) {
    if (knob.setting == setting) {
      return &knob;
    }
  }
  return nullptr;
}

bool accepts_per_request(const Knob& knob, const nlohmann::json& props) {
  if (knob.request_field.empty() || !props.is_object()) {
    return false;
  }
  const auto settings = props.find("default_generation_settings");
  if (settings == props.end() || !settings->is_object()) {
    return false;
  }
  const auto params = settings->find("params");
  if (params == settings->end() || !params->is_object()) {
    return false;
  }
  if (params->contains(std::string(knob.request_field))) {
    return true;  // a flat dotted key, as 3f545be lists "speculative.types"
  }
  const json* node = &*params;  // or nested objects: {"speculative": {"n_max": …}}
  for (const std::string_view part : split(knob.request_field, '.')) {
    if (!node->is_object() || !node->contains(std::string(part))) {
      return false;
    }
    node = &(*node)[std::string(part)];
  }
  return true;
}

Status restrict_knobs(std::vector<KnobPlan>& plans, const std::vector<std::string>& only) {
  if (only.empty()) {
    return {};
  }
  for (const std::string& name : only) {
    if (find_knob(name) == nullptr) {
      std::vector<std::string> names;
      for (const Knob& knob : knob_table()) {
        names.emplace_back(knob.setting);
      }
      return Error{
          fmt::format("--knobs {}: no such knob; the knobs are {}", name, fmt::join(names, ", ")),
          ExitCode::usage};
    }
  }
  for (KnobPlan& plan : plans) {
    const bool named = plan.knob != nullptr &&
                       std::find(only.begin(), only.end(), plan.knob->setting) != only.end();
    if (!named && plan.skipped.empty()) {
      plan.skipped = "not among --knobs";
      plan.values.clear();
    }
  }
  return {};
}

std::vector<KnobPlan> plan_knobs(const KnobContext& context) {
  std::vector<KnobPlan> plans;
  for (const Knob& knob : knob_table()) {
    KnobPlan plan;
    plan.knob = &knob;
    plan.skipped = skip_reason(knob, context);
    if (plan.skipped.empty()) {
      plan.values = knob_values(knob, context, plan.ordered);
      plan.mode =
          accepts_per_request(knob, context.props) ? ApplyMode::per_request : ApplyMode::restart;
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace gb10tune::tune
