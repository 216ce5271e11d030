// Parsing llama-server's JSON answers into the typed views of server_api.hpp.
#include "gb10tune/http/server_api.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace gb10tune::http {

namespace {

using nlohmann::json;

Error bad(std::string_view what, const std::string& why) {
  return Error{fmt::format("unexpected {} from llama-server: {}", what, why), ExitCode::failed};
}

Expected<json> parse_json(std::string_view text, std::string_view what) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) {
    return bad(what, "the answer is not JSON");
  }
  return doc;
}

template <class T>
std::optional<T> optional_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return std::nullopt;
  }
  if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? std::optional<bool>(it->get<bool>()) : std::nullopt;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? std::optional<std::string>(it->get<std::string>()) : std::nullopt;
  } else {
    return it->is_number() ? std::optional<T>(it->get<T>()) : std::nullopt;
  }
}

// A non-negative integer field; nullopt when missing, not an integer, or negative.
std::optional<std::uint64_t> count_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) {
    return std::nullopt;
  }
  if (it->is_number_unsigned()) {
    return it->get<std::uint64_t>();
  }
  if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  return std::nullopt;
}

std::string error_message(const json& doc) {
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
    return doc["error"].value("message", std::string());
  }
  return {};
}

}  // namespace

HealthState classify_health(const http::HttpResponse& response) {
  if (response.status == 200) {
    return HealthState::ready;
  }
  if (response.status == 503) {
    const json doc = json::parse(response.body, nullptr, false);
    if (!doc.is_discarded() && doc.is_object() && doc.contains("error") &&
        doc["error"].is_object()) {
      const json& error = doc["error"];
      if (error.value("type", std::string()) == "unavailable_error" ||
          error.value("message", std::string()) == "Loading model") {
        return HealthState::loading;
      }
    }
  }
  return HealthState::error;
}

Expected<ServerProps> parse_props(std::string_view text) {
  auto doc = parse_json(text, "/props answer");
  if (!doc) {
    return doc.error();
  }
  if (!doc->is_object()) {
    return bad("/props answer", "expected a JSON object");
  }
  const json& props = *doc;
  ServerProps out;
  const auto settings = props.find("default_generation_settings");
  if (settings == props.end() || !settings->is_object()) {
    return bad("/props answer", "no `default_generation_settings` object");
  }
  const auto n_ctx = count_field(*settings, "n_ctx");
  if (!n_ctx) {
    return bad("/props answer", "`default_generation_settings.n_ctx` is missing or not a count");
  }
  out.n_ctx_per_slot = *n_ctx;
  const auto slots = count_field(props, "total_slots");
  if (!slots || *slots > UINT32_MAX) {
    return bad("/props answer", "`total_slots` is missing or not a count");
  }
  out.total_slots = static_cast<std::uint32_t>(*slots);
  const auto model_path = optional_field<std::string>(props, "model_path");
  if (!model_path) {
    return bad("/props answer", "`model_path` is missing or not a string");
  }
  out.model_path = *model_path;
  out.build_info = optional_field<std::string>(props, "build_info").value_or("");
  out.model_alias = optional_field<std::string>(props, "model_alias");
  out.is_sleeping = optional_field<bool>(props, "is_sleeping");
  out.endpoint_metrics = optional_field<bool>(props, "endpoint_metrics");

  // The default request parameters: "speculative.types" in current builds,
  // "speculative.n_max" (+ n_min, p_min) in older ones. Neither says what the server runs.
  const auto params = settings->find("params");
  if (params != settings->end() && params->is_object()) {
    out.speculative_types = optional_field<std::string>(*params, "speculative.types");
    out.speculative_n_max = optional_field<std::int64_t>(*params, "speculative.n_max");
  }
  return out;
}

Expected<std::vector<SlotInfo>> parse_slots(std::string_view text) {
  auto doc = parse_json(text, "/slots answer");
  if (!doc) {
    return doc.error();
  }
  if (!doc->is_array()) {
    const std::string message = error_message(*doc);
    if (!message.empty()) {
      return bad("/slots answer",
                 fmt::format("the server refused: \"{}\" (slots monitoring may be off: "
                             "--no-slots)",
                             message));
    }
    return bad("/slots answer", "expected a JSON array of slots");
  }
  std::vector<SlotInfo> slots;
  for (const json& entry : *doc) {
    if (!entry.is_object()) {
      return bad("/slots answer", "a slot entry is not a JSON object");
    }
    const auto id = optional_field<std::int64_t>(entry, "id");
    const auto n_ctx = count_field(entry, "n_ctx");
    const auto processing = optional_field<bool>(entry, "is_processing");
    if (!id || !n_ctx || !processing || *id < 0 || *id > INT32_MAX) {
      return bad("/slots answer", fmt::format("slot entry {} lacks `id`, `n_ctx` or "
                                              "`is_processing`",
                                              slots.size()));
    }
    SlotInfo slot;
    slot.id = static_cast<int>(*id);
    slot.n_ctx = *n_ctx;
    slot.speculative = optional_field<bool>(entry, "speculative");
    slot.is_processing = *processing;
    slots.push_back(slot);
  }
  return slots;
}

Expected<Timings> parse_completion_timings(std::string_view text) {
  auto doc = parse_json(text, "completion answer");
  if (!doc) {
    return doc.error();
  }
  if (!doc->is_object()) {
    return bad("completion answer", "expected a JSON object");
  }
  const auto it = doc->find("timings");
  if (it == doc->end() || !it->is_object()) {
    const std::string message = error_message(*doc);
    if (!message.empty()) {
      return bad("completion answer",
                 fmt::format("the server answered with an error: \"{}\"", message));
    }
    return Error{"the server's answer has no `timings` object; is this llama-server?",
                 ExitCode::failed};
  }
  const json& t = *it;
  Timings out;
  const std::pair<const char*, double*> required[] = {
      {"prompt_n", &out.prompt_n},
      {"prompt_ms", &out.prompt_ms},
      {"prompt_per_second", &out.prompt_per_second},
      {"predicted_n", &out.predicted_n},
      {"predicted_ms", &out.predicted_ms},
      {"predicted_per_second", &out.predicted_per_second},
  };
  for (const auto& [key, target] : required) {
    const auto value = optional_field<double>(t, key);
    if (!value) {
      return bad("completion answer", fmt::format("`timings.{}` is missing or not a number", key));
    }
    *target = *value;
  }
  out.cache_n = optional_field<double>(t, "cache_n");
  out.draft_n = optional_field<double>(t, "draft_n");
  out.draft_n_accepted = optional_field<double>(t, "draft_n_accepted");
  return out;
}

Expected<std::string> parse_applied_template(std::string_view text) {
  auto doc = parse_json(text, "/apply-template answer");
  if (!doc) {
    return doc.error();
  }
  const auto it = doc->is_object() ? doc->find("prompt") : doc->end();
  if (!doc->is_object() || it == doc->end() || !it->is_string()) {
    return bad("/apply-template answer", "no \"prompt\" string");
  }
  return it->get<std::string>();
}

Expected<std::size_t> parse_token_count(std::string_view text) {
  auto doc = parse_json(text, "/tokenize answer");
  if (!doc) {
    return doc.error();
  }
  const auto it = doc->is_object() ? doc->find("tokens") : doc->end();
  if (!doc->is_object() || it == doc->end() || !it->is_array()) {
    return bad("/tokenize answer", "no \"tokens\" array");
  }
  return it->size();
}

}  // namespace gb10tune::http
