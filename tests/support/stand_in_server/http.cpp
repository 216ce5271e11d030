// Stand-in llama-server, part 2: the HTTP endpoints, answering with the JSON shapes of
// llama-server (commit 3f545be): /health, /props, /slots, /metrics and the completion
// endpoints with their `timings` object.
#include <httplib.h>

#include <chrono>
#include <thread>

#include "stand_in.hpp"

namespace standin {

namespace {

using nlohmann::json;

constexpr const char* kJsonType = "application/json; charset=utf-8";

void send_error(httplib::Response& res, int status, const std::string& message,
                const std::string& type) {
  res.status = status;
  res.set_content(json{{"error", {{"code", status}, {"message", message}, {"type", type}}}}.dump(),
                  kJsonType);
}

// The first --alias, else the -m argument as given (like 3f545be's model_alias).
std::string model_name(const ServerArgs& args) {
  if (!args.alias.empty()) {
    return args.alias.substr(0, args.alias.find(','));
  }
  return args.model_path;
}

// Marks one slot busy for the lifetime of a request.
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<int>& busy) : m_busy(busy) { ++m_busy; }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;
  ~BusyGuard() { --m_busy; }

 private:
  std::atomic<int>& m_busy;
};

json default_timings(bool speculative) {
  json timings = {
      {"cache_n", 0},
      {"prompt_n", 512},
      {"prompt_ms", 1656.31},
      {"prompt_per_token_ms", 3.235},
      {"prompt_per_second", 309.12},
      {"predicted_n", 128},
      {"predicted_ms", 5400.42},
      {"predicted_per_token_ms", 42.19},
      {"predicted_per_second", 23.70},
  };
  if (speculative) {
    timings["draft_n"] = 132;
    timings["draft_n_accepted"] = 89;
  }
  return timings;
}

// Like 3f545be, /props shows the defaults of a request (task_params with the server's
// sampling settings): "speculative.types" is "none" whatever the server runs; the server's
// speculative decoding shows only in /slots.
json props(const ServerArgs& args, const Shared& shared) {
  const std::string spec_types = "none";
  json params = {
      {"seed", 4294967295U},
      {"temperature", 0.8},
      {"top_k", 40},
      {"top_p", 0.95},
      {"min_p", 0.05},
      {"n_predict", -1},
      {"max_tokens", -1},
      {"stream", true},
      {"speculative.types", spec_types},
      {"timings_per_token", false},
      {"backend_sampling", false},
  };
  return {
      {"default_generation_settings", {{"params", params}, {"n_ctx", slot_context(args)}}},
      {"total_slots", total_slots(args)},
      {"model_alias", model_name(args)},
      {"model_ftype", "Q4_K - Medium"},
      {"model_path", args.model_path},
      {"modalities", {{"vision", false}, {"video", false}, {"audio", false}}},
      {"endpoint_slots", true},
      {"endpoint_props", false},
      {"endpoint_metrics", args.metrics},
      {"chat_template", "{{ messages }}"},
      {"bos_token", "<|endoftext|>"},
      {"eos_token", "<|im_end|>"},
      {"build_info", shared.build_info},
      {"is_sleeping", false},
  };
}

// Like 3f545be: `speculative` says whether the slot has a draft context (what the server
// runs); a slot that served a request also lists that request's parameters, whose
// "speculative.types" names the server's type after "none".
json slots(const ServerArgs& args, const Shared& shared) {
  json out = json::array();
  const int busy = shared.busy.load();
  const std::uint64_t served = shared.requests.load();
  for (int id = 0; id < total_slots(args); ++id) {
    json slot = {{"id", id},
                 {"n_ctx", slot_context(args)},
                 {"speculative", speculative(args)},
                 {"is_processing", id < busy}};
    if (id == 0 && served > 0) {
      slot["id_task"] = served;
      slot["params"] = {{"n_predict", -1},
                        {"speculative.types",
                         speculative(args) ? "none," + args.spec_type : std::string("none")}};
      slot["next_token"] = json::array({{{"has_next_token", false},
                                         {"has_new_line", false},
                                         {"n_remain", -1},
                                         {"n_decoded", 0}}});
    }
    out.push_back(std::move(slot));
  }
  return out;
}

std::string metrics_text(const Shared& shared) {
  const auto n = shared.requests.load();
  std::string text;
  const auto add = [&text](const char* name, const char* type, const char* help,
                           std::uint64_t value) {
    text += std::string("# HELP llamacpp:") + name + " " + help + "\n";
    text += std::string("# TYPE llamacpp:") + name + " " + type + "\n";
    text += std::string("llamacpp:") + name + " " + std::to_string(value) + "\n";
  };
  add("prompt_tokens_total", "counter", "Number of prompt tokens processed.", n * 512);
  add("tokens_predicted_total", "counter", "Number of generation tokens processed.", n * 128);
  add("n_decode_total", "counter", "Total number of llama_decode() calls", n * 40);
  add("requests_processing", "gauge", "Number of requests processing.",
      static_cast<std::uint64_t>(shared.busy.load()));
  return text;
}

// The prompt a chat request becomes, as /apply-template answers it: ChatML (the template of
// the Qwen models the stand-in names), with the assistant's turn opened at the end.
std::string chat_prompt(const json& body) {
  std::string prompt;
  for (const auto& message : body.value("messages", json::array())) {
    std::string content;
    const json& given = message.contains("content") ? message["content"] : json();
    if (given.is_string()) {
      content = given.get<std::string>();
    } else if (given.is_array()) {
      for (const auto& part : given) {
        if (part.is_object() && part.value("type", "") == "text") {
          content += part.value("text", "");
        }
      }
    }
    prompt += "<|im_start|>" + message.value("role", "user") + "\n" + content + "<|im_end|>\n";
  }
  return prompt + "<|im_start|>assistant\n";
}

// Token ids for `text`: one per STANDIN_TOKEN_BYTES bytes (rounded up), and a BOS first when
// asked for the special tokens. The ids are a digest of each piece, below the vocabulary size.
json token_ids(const std::string& text, bool add_special, int bytes_per_token) {
  json ids = json::array();
  if (add_special) {
    ids.push_back(1);
  }
  const auto step = static_cast<std::size_t>(bytes_per_token);
  for (std::size_t at = 0; at < text.size(); at += step) {
    unsigned id = 7;
    for (const char c : text.substr(at, step)) {
      id = id * 31 + static_cast<unsigned char>(c);
    }
    ids.push_back(2 + id % 151000);
  }
  return ids;
}

// Answers a completion request (chat or raw) with the next timings object.
void complete(const httplib::Request& req, httplib::Response& res, const ServerArgs& args,
              Shared& shared, bool chat) {
  const json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    send_error(res, 400, "the request body is not a JSON object", "invalid_request_error");
    return;
  }
  if (body.value("stream", false)) {
    send_error(res, 400, "the stand-in llama-server does not stream; send \"stream\": false",
               "invalid_request_error");
    return;
  }
  if (chat && !body.contains("messages")) {
    send_error(res, 400, "'messages' is required", "invalid_request_error");
    return;
  }
  if (chat && shared.check_context) {
    // Like 3f545be without context shift: a prompt as long as the slot is refused.
    const std::size_t tokens = token_ids(chat_prompt(body), true, shared.bytes_per_token).size();
    const std::uint64_t n_ctx = slot_context(args);
    if (tokens >= n_ctx) {
      res.status = 400;
      res.set_content(json{{"error",
                            {{"code", 400},
                             {"message", "request (" + std::to_string(tokens) +
                                             " tokens) exceeds the available context size (" +
                                             std::to_string(n_ctx) + " tokens), try increasing it"},
                             {"type", "exceed_context_size_error"},
                             {"n_prompt_tokens", tokens},
                             {"n_ctx", n_ctx}}}}
                          .dump(),
                      kJsonType);
      return;
    }
  }
  BusyGuard guard(shared.busy);
  const std::uint64_t index = shared.requests.fetch_add(1);
  if (shared.response_delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(shared.response_delay_ms));
  }
  const json timings = shared.speed             ? speed_timings(*shared.speed, body, index)
                       : shared.timings.empty() ? default_timings(speculative(args))
                                                : shared.timings[index % shared.timings.size()];
  const auto predicted = timings.value("predicted_n", 0);
  const auto prompt = timings.value("prompt_n", 0) + timings.value("cache_n", 0);
  const std::string content = "The stand-in server answers every prompt with this sentence.";
  json answer;
  if (chat) {
    answer = {
        {"choices", json::array({{{"finish_reason", "stop"},
                                  {"index", 0},
                                  {"message", {{"role", "assistant"}, {"content", content}}}}})},
        {"created", 1787400000},
        {"model", model_name(args)},
        {"system_fingerprint", shared.build_info},
        {"object", "chat.completion"},
        {"usage",
         {{"completion_tokens", predicted},
          {"prompt_tokens", prompt},
          {"total_tokens", predicted + prompt}}},
        {"id", "chatcmpl-standin" + std::to_string(index)},
        {"timings", timings},
    };
  } else {
    answer = {
        {"index", 0},
        {"content", content},
        {"id_slot", 0},
        {"stop", true},
        {"model", model_name(args)},
        {"tokens_predicted", predicted},
        {"tokens_evaluated", prompt},
        {"stop_type", "eos"},
        {"timings", timings},
    };
  }
  res.set_content(answer.dump(), kJsonType);
}

}  // namespace

void install_routes(httplib::Server& server, const ServerArgs& args, Shared& shared) {
  // Like the real server, nothing but the loading error is served until the model is loaded.
  server.set_pre_routing_handler([&shared](const httplib::Request&, httplib::Response& res) {
    if (shared.ready.load()) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(res, 503, "Loading model", "unavailable_error");
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", kJsonType);
  });
  server.Get("/props", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(props(args, shared).dump(), kJsonType);
  });
  server.Get("/slots", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(slots(args, shared).dump(), kJsonType);
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    if (!args.metrics) {
      send_error(res, 501,
                 "This server does not support metrics endpoint. Start it with `--metrics`",
                 "not_supported_error");
      return;
    }
    res.set_content(metrics_text(shared), "text/plain; version=0.0.4");
  });
  for (const char* path : {"/completion", "/completions", "/v1/completions"}) {
    server.Post(path, [&](const httplib::Request& req, httplib::Response& res) {
      complete(req, res, args, shared, false);
    });
  }
  // Like 3f545be: /apply-template answers {"prompt"} for a chat request, /tokenize {"tokens"}
  // for {"content"} (BOS only with "add_special": true). An "old build" has neither (404).
  if (!shared.no_tokenize) {
    server.Post("/apply-template", [&](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object() || !body.contains("messages")) {
        send_error(res, 400, "'messages' is required", "invalid_request_error");
        return;
      }
      res.set_content(json{{"prompt", chat_prompt(body)}}.dump(), kJsonType);
    });
    server.Post("/tokenize", [&](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        send_error(res, 400, "the request body is not a JSON object", "invalid_request_error");
        return;
      }
      json tokens = json::array();
      if (body.contains("content") && body["content"].is_string()) {
        tokens = token_ids(body["content"].get<std::string>(), body.value("add_special", false),
                           shared.bytes_per_token);
      }
      res.set_content(json{{"tokens", tokens}}.dump(), kJsonType);
    });
  }
  for (const char* path : {"/chat/completions", "/v1/chat/completions"}) {
    server.Post(path, [&](const httplib::Request& req, httplib::Response& res) {
      complete(req, res, args, shared, true);
    });
  }
}

}  // namespace standin
