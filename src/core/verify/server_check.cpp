#include <fmt/format.h>

#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

Finding props_finding(const PropsAnswer& props, const Expectations& expected) {
  Finding finding;
  finding.id = "server-props";
  finding.fact = "K9";
  finding.summary = "/props matches the flags";
  std::vector<std::string> mismatches;
  if (expected.slots && props.total_slots != *expected.slots) {
    finding.severity = Severity::fail;
    mismatches.push_back(fmt::format("{} slots, the {} says {}", props.total_slots, expected.source,
                                     *expected.slots));
  }
  if (expected.model_path && !expected.model_path->empty() && !props.model_path.empty() &&
      props.model_path != *expected.model_path) {
    finding.severity = Severity::fail;
    mismatches.push_back(fmt::format("model {}, the {} says {}", props.model_path, expected.source,
                                     *expected.model_path));
  }
  if (expected.ctx_per_slot && props.n_ctx_per_slot != *expected.ctx_per_slot) {
    if (finding.severity == Severity::ok) {
      finding.severity = Severity::warn;
    }
    mismatches.push_back(fmt::format("context {} per slot, the {} says {}", props.n_ctx_per_slot,
                                     expected.source, *expected.ctx_per_slot));
  }
  if (mismatches.empty()) {
    finding.evidence =
        fmt::format("{} slots, context {} per slot{}", props.total_slots, props.n_ctx_per_slot,
                    props.model_path.empty() ? "" : ", model " + props.model_path);
  } else {
    finding.evidence = fmt::format("{}", fmt::join(mismatches, "; "));
    finding.fix =
        "the server at this URL does not run the flags checked above: check --host/"
        "--port (or --url), then restart it with the intended flags";
  }
  return finding;
}

Finding slots_finding(const std::vector<SlotAnswer>& slots, const PropsAnswer* props) {
  Finding finding;
  finding.id = "server-slots";
  finding.fact = "K10";
  finding.summary = "/slots matches /props";
  std::size_t speculative = 0;
  std::size_t busy = 0;
  for (const SlotAnswer& slot : slots) {
    speculative += slot.speculative.value_or(false) ? 1 : 0;
    busy += slot.is_processing ? 1 : 0;
  }
  finding.evidence =
      fmt::format("{}, {} busy, {} speculative", plural(slots.size(), "slot"), busy, speculative);
  if (props != nullptr && slots.size() != props->total_slots) {
    finding.severity = Severity::warn;
    finding.evidence += fmt::format("; /props says {} slots", props->total_slots);
    finding.fix = "run gb10tune verify again; a mismatch that stays is a server bug";
  }
  return finding;
}

// "draft-mtp, n-max 4" / "none" / "not set".
std::string spec_text(const Expectations& e) {
  if (!e.spec_type) {
    return "--spec-type not set";
  }
  std::string text = "--spec-type " + *e.spec_type;
  if (e.speculative.value_or(false) && e.draft_n_max) {
    text += fmt::format(", --spec-draft-n-max {}", *e.draft_n_max);
  }
  if (!e.spec_origin.empty()) {
    text += fmt::format(" ({})", e.spec_origin);
  }
  return text;
}

}  // namespace

std::uint64_t server_ctx_per_slot(std::uint64_t n_ctx, std::uint32_t slots, bool kv_unified,
                                  std::uint64_t n_ctx_train) {
  constexpr std::uint64_t kPad = 256;
  const auto pad = [](std::uint64_t value) { return (value + kPad - 1) / kPad * kPad; };
  const std::uint64_t streams = kv_unified || slots == 0 ? 1 : slots;
  if (n_ctx == 0) {
    n_ctx = n_ctx_train * streams;  // the fit step asks for the training context per stream
  }
  std::uint64_t per_slot = pad(n_ctx);
  if (!kv_unified && slots > 0) {
    per_slot = pad(per_slot / slots);
  }
  if (n_ctx_train > 0 && per_slot > n_ctx_train) {
    per_slot = n_ctx_train;  // "the slot context exceeds the training context … capping"
  }
  return per_slot;
}

std::vector<Finding> check_server(ServerProbe& probe, const Expectations& expected,
                                  std::string_view url, ServerAnswers* answers) {
  std::vector<Finding> findings;
  Finding health;
  health.id = "server-health";
  health.fact = "K18";
  health.summary = "/health answers 200";
  const HealthAnswer answer = probe.health();
  switch (answer.state) {
    case HealthState::ready:
      health.evidence = fmt::format("200 from {}/health", url);
      break;
    case HealthState::loading:
      health.severity = Severity::warn;
      health.evidence =
          fmt::format("{} from {}/health: the model is still loading", answer.status, url);
      health.fix = "run gb10tune verify again when loading has finished";
      break;
    case HealthState::error:
      health.severity = Severity::fail;
      health.evidence = fmt::format("{} from {}/health{}{}", answer.status, url,
                                    answer.detail.empty() ? "" : ": ", answer.detail);
      health.fix = "read the server's log; restart it";
      break;
    case HealthState::no_answer:
      health.severity = Severity::fail;
      health.evidence = fmt::format("no answer from {}: {}", url, answer.detail);
      health.fix =
          "check that the URL matches the server's --host/--port (or pass --url); a "
          "server that does not answer is hung: restart it";
      break;
  }
  findings.push_back(health);
  if (answer.state != HealthState::ready) {
    return findings;
  }

  const auto props = probe.props();
  if (props) {
    if (answers != nullptr) {
      answers->props = *props;
    }
    findings.push_back(props_finding(*props, expected));
  } else {
    Finding failed;
    failed.id = "server-props";
    failed.fact = "K9";
    failed.summary = "/props matches the flags";
    failed.severity = Severity::warn;
    failed.evidence = props.error().message;
    failed.fix = "a llama-server too old for /props cannot be checked here; update llama.cpp";
    findings.push_back(std::move(failed));
  }

  const auto slots = probe.slots();
  if (slots) {
    if (answers != nullptr) {
      answers->slots = *slots;
    }
    findings.push_back(slots_finding(*slots, props ? &*props : nullptr));
  } else {
    Finding off;
    off.id = "server-slots";
    off.fact = "K10";
    off.summary = "/slots matches /props";
    off.evidence = fmt::format("not checked: {}", slots.error().message);
    findings.push_back(std::move(off));
  }
  return findings;
}

std::vector<Finding> check_smoke(ServerProbe& probe, ServerAnswers* answers) {
  Finding finding;
  finding.id = "smoke-completion";
  finding.fact = "K14";
  finding.summary = "a short chat completion returns timings";
  const auto timings = probe.smoke();
  if (!timings) {
    finding.severity = Severity::fail;
    finding.evidence = timings.error().message;
    finding.fix = "read the server's log; the server accepts connections but cannot complete";
    return {finding};
  }
  if (answers != nullptr) {
    answers->smoke = *timings;
  }
  finding.evidence =
      fmt::format("decode {:.1f} t/s ({:.0f} tokens), prefill {:.1f} t/s ({:.0f} tokens)",
                  timings->predicted_per_second, timings->predicted_n, timings->prompt_per_second,
                  timings->prompt_n);
  if (timings->draft_n && timings->draft_n_accepted && *timings->draft_n > 0) {
    finding.evidence +=
        fmt::format(", draft acceptance {:.0f}% ({:.0f}/{:.0f}; short prompts understate it, K5)",
                    100.0 * *timings->draft_n_accepted / *timings->draft_n,
                    *timings->draft_n_accepted, *timings->draft_n);
  }
  return {finding};
}

namespace {

// What the sources say about drafting: whether the server runs a draft context (and which
// source said so first), whether the smoke completion drafted, and every source's words.
struct DraftingSeen {
  std::optional<bool> running;
  std::string running_source;
  std::optional<bool> drafted;
  std::vector<std::string> said;
};

DraftingSeen drafting_seen(const Expectations& planned, const Expectations* flags,
                           const ServerAnswers& answers) {
  // What the server runs: /slots first (each slot says whether it has a draft context), then
  // the smoke completion's draft_n, then the process's own flags.
  DraftingSeen seen;
  std::optional<bool>& running = seen.running;
  std::vector<std::string>& said = seen.said;
  if (answers.slots) {
    std::size_t known = 0;
    std::size_t on = 0;
    for (const SlotAnswer& slot : *answers.slots) {
      known += slot.speculative ? 1 : 0;
      on += slot.speculative.value_or(false) ? 1 : 0;
    }
    if (known > 0) {
      running = on > 0;
      seen.running_source = "/slots";
      said.push_back(
          fmt::format("/slots: {} of {} speculative", on, plural(answers.slots->size(), "slot")));
    } else {
      said.push_back("/slots: this build does not say (no `speculative` field)");
    }
  }
  std::optional<bool>& drafted = seen.drafted;
  if (answers.smoke) {
    const auto& smoke = *answers.smoke;
    drafted = smoke.draft_n && *smoke.draft_n > 0;
    said.push_back(*drafted ? fmt::format("smoke completion: draft_n {:.0f}, {:.0f} accepted",
                                          *smoke.draft_n, smoke.draft_n_accepted.value_or(0))
                            : std::string("smoke completion: no draft_n in its timings"));
    if (!running) {
      running = drafted;
      seen.running_source = "the smoke completion";
    }
  }
  if (flags != nullptr) {
    said.push_back("flags: " + spec_text(*flags));
    if (!running && flags->spec_type) {
      running = flags->speculative;
      seen.running_source = "the flags";
    }
  }
  if (planned.source == "launch record") {
    said.push_back(
        fmt::format("launch record: {}",
                    planned.speculative.value_or(false)
                        ? fmt::format("draft-mtp, n-max {}", planned.draft_n_max.value_or(3))
                        : std::string("no speculative decoding")));
  }
  if (planned.model_has_mtp) {
    said.push_back(*planned.model_has_mtp ? "model: an MTP head (nextn_predict_layers > 0)"
                                          : "model: no MTP head");
  }
  if (answers.props && answers.props->request_spec_types) {
    said.push_back(fmt::format(
        "/props: speculative.types \"{}\" (the per-request default in this build, not what the "
        "server runs)",
        *answers.props->request_spec_types));
  }

  return seen;
}

}  // namespace

Finding check_speculative(const Expectations& planned, const Expectations* flags,
                          const ServerAnswers& answers) {
  Finding finding;
  finding.id = "speculative-decoding";
  finding.fact = "K4";
  finding.summary = "the server drafts as planned";
  const DraftingSeen seen = drafting_seen(planned, flags, answers);
  const std::optional<bool>& running = seen.running;
  const std::string& running_source = seen.running_source;
  const std::optional<bool>& drafted = seen.drafted;
  const std::vector<std::string>& said = seen.said;

  // What was planned: the launch record's or the flags' setting; without one, the model's
  // MTP head says it should be on (K4).
  const bool explicit_plan = planned.speculative.has_value();
  const bool wanted = planned.speculative.value_or(planned.model_has_mtp.value_or(false));
  const std::string wanted_by =
      explicit_plan ? fmt::format("the {}", planned.source) : std::string("the model's MTP head");
  const bool plural_source = explicit_plan && planned.source == "flags";
  const std::string evidence = fmt::format("{}", fmt::join(said, "; "));
  const std::string pass_flag =
      "start the server with --spec-type draft-mtp --spec-draft-n-max 4 (K4: +15.6% decode in "
      "the report)";

  if (!running) {
    finding.severity = wanted ? Severity::warn : Severity::ok;
    finding.evidence = fmt::format(
        "{}; {}", wanted ? "unknown whether the server drafts" : "no speculative decoding planned",
        said.empty() ? std::string("no source says") : evidence);
    if (wanted) {
      finding.fix =
          "run gb10tune verify --smoke (the completion's draft_n tells), or start the "
          "server without --no-slots";
    }
    return finding;
  }
  if (wanted && !*running) {
    finding.severity = Severity::fail;
    finding.evidence =
        fmt::format("off according to {}, but {} {} for draft-mtp: {}", running_source, wanted_by,
                    plural_source ? "ask" : "asks", evidence);
    if (flags == nullptr) {
      finding.fix = pass_flag;
    } else if (!flags->speculative.value_or(false)) {
      finding.fix = "--spec-type draft-mtp is missing: " + pass_flag;
    } else {
      finding.fix =
          "the flags ask for it but the server runs without a draft context: read its log "
          "(\"speculative decoding not supported\"), then " +
          pass_flag;
    }
    return finding;
  }
  if (!wanted && *running && explicit_plan) {
    finding.severity = Severity::warn;
    finding.evidence = fmt::format("on according to {}, but {} {} off: {}", running_source,
                                   wanted_by, plural_source ? "say" : "says", evidence);
    finding.fix = "restart the server with the settings you planned (one change at a time, K7)";
    return finding;
  }
  if (wanted && *running && drafted && !*drafted) {
    finding.severity = Severity::warn;
    finding.evidence =
        fmt::format("the slots can draft, but the smoke completion drafted nothing: {}", evidence);
    finding.fix = "run gb10tune bench server to see the draft acceptance on real work (K5)";
    return finding;
  }
  finding.evidence = fmt::format("{}: {}", *running ? "on" : "off", evidence);
  return finding;
}

}  // namespace gb10tune::verify
