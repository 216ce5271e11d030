#include <fmt/format.h>

#include "gb10tune/verify/checks.hpp"

namespace gb10tune::verify {

namespace {

std::string yes_no(bool value) {
  return value ? "on" : "off";
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
  if (expected.ctx_per_slot && props.n_ctx_per_slot != *expected.ctx_per_slot) {
    if (finding.severity == Severity::ok) {
      finding.severity = Severity::warn;
    }
    mismatches.push_back(fmt::format("context {} per slot, the {} says {}", props.n_ctx_per_slot,
                                     expected.source, *expected.ctx_per_slot));
  }
  if (expected.speculative && *expected.speculative && props.speculative && !*props.speculative) {
    finding.severity = Severity::fail;
    finding.fact = "K4";
    mismatches.push_back(
        fmt::format("speculative decoding off, the {} asks for draft-mtp", expected.source));
  }
  if (mismatches.empty()) {
    finding.evidence =
        fmt::format("{} slots, context {} per slot{}", props.total_slots, props.n_ctx_per_slot,
                    props.speculative ? fmt::format(", speculative {}", yes_no(*props.speculative))
                                      : std::string());
  } else {
    finding.evidence = fmt::format("{}", fmt::join(mismatches, "; "));
    finding.fix =
        "the server at this URL does not run the flags checked above: check --host/"
        "--port (or --url), then restart it with the intended flags";
  }
  return finding;
}

Finding slots_finding(const std::vector<SlotAnswer>& slots, const PropsAnswer* props,
                      const Expectations& expected) {
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
  finding.evidence = fmt::format("{} slot{}, {} busy, {} speculative", slots.size(),
                                 slots.size() == 1 ? "" : "s", busy, speculative);
  if (props != nullptr && slots.size() != props->total_slots) {
    finding.severity = Severity::warn;
    finding.evidence += fmt::format("; /props says {} slots", props->total_slots);
    finding.fix = "run gb10tune verify again; a mismatch that stays is a server bug";
  }
  if (expected.speculative && *expected.speculative && !slots.empty() && speculative == 0) {
    bool any_known = false;
    for (const SlotAnswer& slot : slots) {
      any_known = any_known || slot.speculative.has_value();
    }
    if (any_known) {
      finding.severity = Severity::fail;
      finding.fact = "K4";
      finding.evidence += fmt::format("; the {} asks for draft-mtp", expected.source);
      finding.fix = "start the server with --spec-type draft-mtp --spec-draft-n-max 4";
    }
  }
  return finding;
}

}  // namespace

std::vector<Finding> check_server(ServerProbe& probe, const Expectations& expected,
                                  std::string_view url) {
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
    findings.push_back(slots_finding(*slots, props ? &*props : nullptr, expected));
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

std::vector<Finding> check_smoke(ServerProbe& probe) {
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

}  // namespace gb10tune::verify
