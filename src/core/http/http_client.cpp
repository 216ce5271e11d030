// The HTTP client over libcurl: one easy handle a call, one deadline for the whole transfer
// (CURLOPT_TIMEOUT_MS, name lookup included), one size cap for headers and body (counted in the
// callbacks, which end the transfer past it), the proxies of an environment or none, and curl's
// error codes put into words that name the URL and the fix.
#include "gb10tune/http/http_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/util/host_port.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"
#include "transfer_failure.hpp"

namespace gb10tune::http {

namespace {

using detail::cap_words;
using detail::ProxyChoice;
using detail::UrlDeleter;

constexpr std::string_view kLlamaServerHint =
    "; llama-server does not answer like this: is it llama-server that listens there?";

Error usage_error(std::string_view text, const std::string& why) {
  return Error{fmt::format("bad server URL '{}': {}", text, why), ExitCode::usage};
}

// curl_global_init once, before the first handle (thread-safe since curl 7.84).
Status global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    return Error{fmt::format("libcurl cannot start: {}", curl_easy_strerror(rc)), ExitCode::failed};
  }
  return {};
}

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// The proxy a request to a `scheme` URL goes through, from `env` as curl reads it.
ProxyChoice choose_proxy(const std::string& scheme, const platform::Environment& env) {
  ProxyChoice choice;
  // http_proxy only in lower case (HTTP_PROXY can be set by a web request's headers in CGI
  // programs), the others in either case, the lower-case one first.
  std::vector<std::string> names;
  if (scheme == "https") {
    names = {"https_proxy", "HTTPS_PROXY"};
  } else {
    names = {"http_proxy"};
  }
  names.insert(names.end(), {"all_proxy", "ALL_PROXY"});
  for (const auto& name : names) {
    if (auto value = env.get(name)) {
      choice.variable = name;
      choice.proxy = std::move(*value);
      break;
    }
  }
  choice.no_proxy = env.get("no_proxy").value_or(env.get("NO_PROXY").value_or(""));
  return choice;
}

// What a transfer gathers in curl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  std::uint64_t received = 0;  // header and body bytes
  HttpReply reply;
  std::optional<Error> stop;  // why a callback ended the transfer

  Error too_large(std::string_view what) const {
    return Error{fmt::format("the answer from {} exceeded {} ({}){}", request->url,
                             cap_words(request->max_bytes), what, request->hint),
                 ExitCode::failed};
  }

  // Counts `bytes` more; false (and `stop` set) past the cap.
  bool count(std::size_t bytes) {
    received += bytes;
    if (received > request->max_bytes) {
      stop = too_large("headers and body together");
      return false;
    }
    return true;
  }

  // The end of an answer's headers: the final answer's status and headers are taken and checked.
  bool end_of_head() {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200) {
      return true;  // an interim answer (100 Continue): the final one follows
    }
    reply.response.status = static_cast<int>(status);
    const char* type = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) {
      reply.response.content_type = type;
    }
    reply.headers.items.clear();
    for (curl_header* header = curl_easy_nextheader(curl, CURLH_HEADER, -1, nullptr);
         header != nullptr; header = curl_easy_nextheader(curl, CURLH_HEADER, -1, header)) {
      reply.headers.items.emplace_back(ascii_lower(header->name), header->value);
    }
    if (request->check) {
      if (Status wanted = request->check(reply.response, reply.headers); !wanted) {
        stop = wanted.error();
        return false;
      }
    }
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (length > 0 && static_cast<std::uint64_t>(length) > request->max_bytes - received) {
      stop = too_large(fmt::format("it announced a body of {} bytes", length));
      return false;
    }
    return true;
  }
};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (!transfer.count(bytes)) {
    return 0;
  }
  const std::string_view line(data, bytes);
  if ((line == "\r\n" || line == "\n") && !transfer.end_of_head()) {
    return 0;
  }
  return bytes;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (!transfer.count(bytes)) {
    return 0;
  }
  transfer.reply.response.body.append(data, bytes);
  return bytes;
}

}  // namespace

std::string HttpHeaders::get(std::string_view name) const {
  for (const auto& [key, value] : items) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

std::string Url::to_string() const {
  return fmt::format("{}://{}{}", scheme, format_host_port(host, port), base_path);
}

Expected<Url> parse_url(std::string_view text) {
  std::string_view rest = text;
  const auto scheme_end = rest.find("://");
  if (scheme_end != std::string_view::npos) {
    const std::string_view scheme = rest.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      return usage_error(text, fmt::format("unknown scheme '{}'; use http://HOST:PORT", scheme));
    }
    rest.remove_prefix(scheme_end + 3);
  }
  Url url;
  if (scheme_end != std::string_view::npos && text.substr(0, scheme_end) == "https") {
    url.scheme = "https";
    url.port = 443;
  }
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    std::string_view base = rest.substr(slash);
    while (!base.empty() && base.back() == '/') {
      base.remove_suffix(1);
    }
    url.base_path = std::string(base);
  }
  const auto authority = parse_host_port(rest.substr(0, slash), url.port);
  if (!authority) {
    return usage_error(text, authority.error().message + "; use http://HOST:PORT");
  }
  url.host = authority->host;
  url.port = authority->port;
  return url;
}

namespace {

// One transfer on a handle of its own, cleaned up before it returns.
Expected<HttpReply> perform(const HttpRequest& request) {
  if (Status started = global_init(); !started) {
    return started.error();
  }
  // What the handle points to is declared first, so that it outlives the handle's cleanup.
  char detail[CURL_ERROR_SIZE] = {};
  Transfer transfer;
  std::unique_ptr<curl_slist, ListDeleter> headers;
  std::unique_ptr<CURL, EasyDeleter> handle(curl_easy_init());
  if (!handle) {
    return Error{"libcurl cannot make a handle (out of memory?)", ExitCode::failed};
  }
  CURL* curl = handle.get();
  transfer.curl = curl;
  transfer.request = &request;
  const std::string user_agent = fmt::format("{}/{}", kToolName, kToolVersion);
  const long timeout_ms = std::max<long>(1, static_cast<long>(request.timeout.count()));

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(curl, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
#if LIBCURL_VERSION_NUM >= 0x075700
  // A lookup still hanging at the deadline is left to end on its own thread, not waited for.
  curl_easy_setopt(curl, CURLOPT_QUICK_EXIT, 1L);
#endif
  // The system CA store, unless SSL_CERT_FILE / SSL_CERT_DIR name another (as OpenSSL's tools
  // read them; libcurl itself does not).
  const platform::Environment process_env = platform::Environment::current();
  const std::string ca_file = process_env.get("SSL_CERT_FILE").value_or("");
  const std::string ca_dir = process_env.get("SSL_CERT_DIR").value_or("");
  if (!ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  }
  if (!ca_dir.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAPATH, ca_dir.c_str());
  }

  ProxyChoice proxy;
  if (request.proxies) {
    const std::string scheme = ascii_lower(request.url.substr(0, request.url.find("://")));
    proxy = choose_proxy(scheme, *request.proxies);
  }
  // An empty proxy turns off curl's own reading of the environment: direct. A proxy's
  // user:password@ is sent with Basic authentication, as curl's command line does.
  curl_easy_setopt(curl, CURLOPT_PROXY, proxy.proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, proxy.no_proxy.c_str());
  curl_easy_setopt(curl, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);

  const auto add_header = [&headers](const char* line) {
    headers.reset(curl_slist_append(headers.release(), line));
  };
  if (request.body) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body->size()));
    add_header("Content-Type: application/json");
    add_header("Expect:");  // no wait for "100 Continue" before a large body
  }
  if (!request.range.empty()) {
    curl_easy_setopt(curl, CURLOPT_RANGE, request.range.c_str());
  }
  if (headers) {
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);

  const CURLcode rc = curl_easy_perform(curl);
  if (transfer.stop) {
    return *transfer.stop;
  }
  if (rc != CURLE_OK) {
    return detail::describe_failure(request, curl, proxy,
                                    detail[0] != '\0' ? detail : curl_easy_strerror(rc),
                                    transfer.received, rc);
  }
  if (transfer.reply.response.status == 0) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    transfer.reply.response.status = static_cast<int>(status);
  }
  const char* redirect = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK &&
      redirect != nullptr) {
    transfer.reply.redirect_url = redirect;
  }
  return std::move(transfer.reply);
}

}  // namespace

Expected<HttpReply> http_request(const HttpRequest& request) {
  // libcurl does not ignore SIGPIPE itself with CURLOPT_NOSIGNAL: a TLS alert written to a
  // server that has hung up would end the process.
  std::optional<Expected<HttpReply>> reply;
  platform::without_sigpipe([&] { reply.emplace(perform(request)); });
  return std::move(*reply);
}

namespace {

HttpRequest server_request(const Url& url, std::string_view path, std::chrono::milliseconds timeout,
                           std::size_t max_bytes) {
  HttpRequest request;
  request.url = url.to_string() + std::string(path);
  request.timeout = timeout;
  request.max_bytes = max_bytes;
  request.hint = std::string(kLlamaServerHint);
  return request;
}

}  // namespace

Expected<HttpResponse> http_get(const Url& url, std::string_view path,
                                std::chrono::milliseconds timeout, std::size_t max_bytes) {
  auto reply = http_request(server_request(url, path, timeout, max_bytes));
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

Expected<HttpResponse> http_post_json(const Url& url, std::string_view path,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      std::size_t max_bytes) {
  HttpRequest request = server_request(url, path, timeout, max_bytes);
  request.body = body;
  auto reply = http_request(request);
  if (!reply) {
    return reply.error();
  }
  return std::move(reply->response);
}

}  // namespace gb10tune::http
