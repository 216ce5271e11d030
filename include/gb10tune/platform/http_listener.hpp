// A very small HTTP/1.0 server for `watch --metrics` (and the tests' webhook receivers): answers
// GET and POST requests from a handler on a thread of its own, one connection at a time, each
// bounded in time and size, so that a client that stalls costs it at most its deadline and
// never touches the caller's thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "gb10tune/platform/fd.hpp"
#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

// A request as the handler sees it.
struct HttpRequest {
  std::string method;  // "GET", "POST"
  std::string path;    // "/metrics", without the query
  std::string body;    // by Content-Length, at most 64 KiB
};

// What the handler answers.
struct HttpAnswer {
  int status = 200;  // 200 or 404
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Listens on a numeric address and port until destroyed. Not copyable.
class HttpListener {
 public:
  using Handler = std::function<HttpAnswer(const HttpRequest& request)>;

  // Binds `address` (IPv4 or IPv6, numeric) and `port` (0: any free port) and starts serving.
  // An Error (ExitCode::usage) naming ADDRESS:PORT and the reason when the address is not
  // numeric or cannot be bound (in use, not this machine's, a privileged port).
  static Expected<std::unique_ptr<HttpListener>> start(const std::string& address, int port,
                                                       Handler handler);
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;
  // Stops serving (within ~0.2 s) and closes the socket.
  ~HttpListener();

  // The port bound (the one chosen when 0 was asked).
  int port() const { return m_port; }

 private:
  HttpListener(Fd socket, int port, Handler handler);
  void serve();

  Fd m_socket;
  int m_port = 0;
  Handler m_handler;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

}  // namespace gb10tune::platform
