// Stand-in llama-server, part 3: the program. It behaves like llama-server of llama.cpp
// commit 3f545be as far as gb10tune can observe (options, log lines, bind-then-load,
// /health while loading, signals), steered by environment variables:
//   STANDIN_HELP=<file>          the --help text (and so the accepted options); default: the
//                                 fixture help-2026-08-commit-3f545be.txt
//   STANDIN_VERSION=<file>       the --version text (printed to stderr, like the real one)
//   STANDIN_RECORD=<file>        writes {"pid","argv","env","cwd","main_realtime_ns"} there at
//                                 start (atomically), and again with "ready_realtime_ns" (the
//                                 CLOCK_REALTIME when /health turned 200) once loaded
//   STANDIN_LOAD_MS=<ms>         how long "loading" takes (default 300)
//   STANDIN_STALL_MS=<ms>        a silent pause (no log output) before loading: a hung start
//   STANDIN_CRASH=oom|bad-model|abort   die during loading with that failure's log lines
//   STANDIN_IGNORE_SIGTERM=1     only SIGKILL ends it
//   STANDIN_SYSTEM_INFO=<line>   replaces the system_info line of the log
//   STANDIN_EXTRA_LOG=<file>     appended to the log once the model is "loaded"
//   STANDIN_TIMINGS=<file>       a JSON array of `timings` objects, used in turn
//   STANDIN_RESPONSE_DELAY_MS=<ms>  delays every completion
//   STANDIN_SPEED=<OPT=VAL:F,…>  rates from each request's context times the factors of the
//                                 options given (speed.cpp), instead of fixed timings
//   STANDIN_SPEC_FAILS=1         the draft context fails to initialise: the server runs
//                                 without speculative decoding whatever --spec-type says
//   STANDIN_RESIDENT_BYTES=<n>   touches n bytes of heap before "loaded": a server holding that
//                                 much more than the stand-in itself
//   STANDIN_TOKEN_BYTES=<n>      /tokenize counts one token per n bytes (default 4), and a chat
//                                 request whose prompt is as long as a slot is refused with the
//                                 real server's HTTP 400 (only when this is given)
//   STANDIN_NO_TOKENIZE=1        an older build: no /tokenize and no /apply-template (404)
// A readable GGUF given with -m sets the training context the slots are capped at.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/model/model_facts.hpp"
#include "gb10tune/util/text_file.hpp"
#include "stand_in.hpp"

extern char** environ;

namespace standin {
namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point g_start = Clock::now();
std::mutex g_log_mutex;

// One log line the way llama.cpp's common log prints it with prefix and timestamps on:
// "M.SS.mmm.uuu L message".
void log_line(char level, const std::string& message) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - g_start).count();
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  std::fprintf(stderr, "%d.%02d.%03d.%03d %c %s\n", static_cast<int>(us / 60000000),
               static_cast<int>(us / 1000000 % 60), static_cast<int>(us / 1000 % 1000),
               static_cast<int>(us % 1000), level, message.c_str());
  std::fflush(stderr);
}

// The "srv  <function>: " prefix of the server's own messages (function right-aligned in 12).
std::string srv(const std::string& function, const std::string& message) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "srv  %12.12s: ", function.c_str());
  return prefix + message;
}

std::string cmn(const std::string& function, const std::string& message) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "cmn  %12.12s: ", function.c_str());
  return prefix + message;
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string item(*entry);
    const auto eq = item.find('=');
    if (eq != std::string::npos) {
      env[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  return env;
}

std::string env_or(const std::map<std::string, std::string>& env, const std::string& name,
                   const std::string& fallback) {
  const auto it = env.find(name);
  return it == env.end() ? fallback : it->second;
}

int env_int(const std::map<std::string, std::string>& env, const std::string& name, int fallback) {
  const auto it = env.find(name);
  return it == env.end() ? fallback : std::atoi(it->second.c_str());
}

// CLOCK_REALTIME in nanoseconds: comparable with the clock of another process (benchmarks).
std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

const std::int64_t g_main_realtime_ns = realtime_ns();

// Writes the record file through a temporary name so that readers never see half of it.
bool write_record(const std::string& path, const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env,
                  std::optional<std::int64_t> ready_ns = std::nullopt) {
  nlohmann::json record = {
      {"pid", static_cast<long>(::getpid())},
      {"argv", argv},
      {"env", env},
      {"cwd", std::filesystem::current_path().string()},
      {"main_realtime_ns", g_main_realtime_ns},
  };
  if (ready_ns) {
    record["ready_realtime_ns"] = *ready_ns;
  }
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << record.dump(2) << '\n';
    if (!out.flush()) {
      return false;
    }
  }
  return std::rename(temp.c_str(), path.c_str()) == 0;
}

// The first four bytes of the model file as gguf.cpp prints them ('?' for unprintable).
std::string magic_of(const std::string& path) {
  std::string magic = "????";
  std::ifstream in(path, std::ios::binary);
  char bytes[4] = {};
  if (in.read(bytes, 4)) {
    for (int i = 0; i < 4; ++i) {
      magic[static_cast<std::size_t>(i)] =
          std::isprint(static_cast<unsigned char>(bytes[i])) ? bytes[i] : '?';
    }
  }
  return magic;
}

// Stops the main loop on SIGINT (and SIGTERM unless ignored).
struct StopSignal {
  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;

  void raise() {
    const std::lock_guard<std::mutex> lock(mutex);
    stop = true;
    cv.notify_all();
  }
  bool requested() {
    const std::lock_guard<std::mutex> lock(mutex);
    return stop;
  }
  // Waits up to `timeout` for a stop; true when one was requested.
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, timeout, [this] { return stop; });
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return stop; });
  }
};

void print_crash(const std::string& crash, const std::string& model) {
  if (crash == "oom") {
    log_line('E',
             "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 36864.00 MiB on "
             "device 0: cudaMalloc failed: out of memory");
    log_line('E', "alloc_tensor_range: failed to allocate CUDA0 buffer of size 38654705664");
    log_line('E',
             "llama_init_from_model: failed to initialize the context: failed to "
             "allocate buffer for kv cache");
    log_line('E',
             cmn("common_init_from_params", "failed to create context with model '" + model + "'"));
    log_line('E', srv("load_model", "failed to create_context with model '" + model + "'"));
  } else {
    log_line('E', "gguf_init_from_file_impl: invalid magic characters: '" + magic_of(model) +
                      "', expected 'GGUF'");
    log_line('E',
             "llama_model_load: error loading model: llama_model_loader: failed to load "
             "model from " +
                 model);
    log_line('E', "llama_model_load_from_file_impl: failed to load model");
    log_line('E', cmn("common_init_from_params", "failed to load model '" + model + "'"));
    log_line('E', srv("load_model", "failed to load model, '" + model + "'"));
  }
  log_line('I', srv("operator()", "operator(): cleaning up before exit..."));
  log_line('E', srv("llama_server", "exiting due to model loading error"));
}

int run(int argc, char** argv) {
  const std::vector<std::string> args_in(argv, argv + argc);
  const auto env = environment();

  if (const auto it = env.find("STANDIN_RECORD"); it != env.end()) {
    if (!write_record(it->second, args_in, env)) {
      std::fprintf(stderr, "stand-in: cannot write the record file %s\n", it->second.c_str());
      return 1;
    }
  }
  const std::string help_path = env_or(env, "STANDIN_HELP", STANDIN_DEFAULT_HELP);
  const auto help = gb10tune::read_text_file(help_path);
  if (!help) {
    std::fprintf(stderr, "stand-in: cannot read the help text %s\n", help_path.c_str());
    return 1;
  }
  ServerArgs args;
  if (const auto error =
          parse_args(args_in, gb10tune::server::ServerFlags::parse_help(*help), env, args)) {
    std::fprintf(stderr, "%s\n", error->c_str());
    return 1;
  }
  if (args.help) {
    std::fwrite(help->data(), 1, help->size(), stdout);
    return 0;
  }
  if (!args.model_path.empty()) {
    // A real GGUF gives the training context the slots are capped at.
    if (const auto file = gb10tune::gguf::read_gguf(args.model_path)) {
      if (const auto facts = gb10tune::model::describe_model(*file);
          facts && facts->context_length > 0) {
        args.n_ctx_train = facts->context_length;
      }
    }
  }
  args.spec_init_failed = env_or(env, "STANDIN_SPEC_FAILS", "") == "1";
  if (args.version) {
    const auto version =
        gb10tune::read_text_file(env_or(env, "STANDIN_VERSION", STANDIN_DEFAULT_VERSION));
    std::fprintf(stderr, "%s", version.value_or("version: 0 (unknown)\n").c_str());
    return 0;
  }

  Shared shared;
  shared.build_info = "b0-unknown";
  shared.response_delay_ms = env_int(env, "STANDIN_RESPONSE_DELAY_MS", 0);
  shared.bytes_per_token = std::max(1, env_int(env, "STANDIN_TOKEN_BYTES", 4));
  shared.check_context = env.count("STANDIN_TOKEN_BYTES") > 0;
  shared.no_tokenize = env_or(env, "STANDIN_NO_TOKENIZE", "") == "1";
  shared.speed = speed_factor(env, args_in);
  if (const auto it = env.find("STANDIN_TIMINGS"); it != env.end()) {
    const auto text = gb10tune::read_text_file(it->second);
    const auto parsed = nlohmann::json::parse(text.value_or(""), nullptr, false);
    if (!parsed.is_array() || parsed.empty()) {
      std::fprintf(stderr, "stand-in: %s must hold a non-empty JSON array\n", it->second.c_str());
      return 1;
    }
    shared.timings.assign(parsed.begin(), parsed.end());
  }

  // Signals are taken by one thread; every other thread inherits the blocked mask.
  const bool ignore_term = env_or(env, "STANDIN_IGNORE_SIGTERM", "") == "1";
  static sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  if (ignore_term) {
    ::signal(SIGTERM, SIG_IGN);
  } else {
    sigaddset(&signals, SIGTERM);
  }
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  static StopSignal stop;
  std::thread([] {
    int received = 0;
    sigwait(&signals, &received);
    stop.raise();
  }).detach();

  log_line('I',
           cmn("common_params_print_info", "build 0 (unknown) with GNU 12.2.0 for Linux aarch64"));
  log_line('I', cmn("common_params_print_info", "verbosity = 3 (adjust with the `-lv N` CLI arg)"));
  log_line('I', cmn("common_params_print_info",
                    env_or(env, "STANDIN_SYSTEM_INFO",
                           "system_info: n_threads = 20 (n_threads_batch = 20) / 20 | CPU : "
                           "NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | MATMUL_INT8 = 1 | DOTPROD = "
                           "1 | SVE = 1 | SVE_CNT = 16 | OPENMP = 1 | REPACK = 1 | ")));

  // Bind first, like the real server, so that /health answers while loading.
  httplib::Server server;
  // SO_REUSEADDR only: the Debian build of cpp-httplib also sets SO_REUSEPORT, which would let
  // a second server share a busy port; llama-server's own copy does that only on --reuse-port.
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  install_routes(server, args, shared);
  int port = args.port;
  if (port == 0) {
    port = server.bind_to_any_port(args.host);
  } else if (!server.bind_to_port(args.host, port)) {
    port = -1;
  }
  if (port < 0) {
    log_line('E', srv("start", "couldn't bind HTTP server socket, hostname: " + args.host +
                                   ", port: " + std::to_string(args.port)));
    log_line('I', srv("operator()", "operator(): cleaning up before exit..."));
    log_line('E', srv("llama_server", "exiting due to HTTP server error"));
    return 1;
  }
  std::thread listener([&server] { server.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so wait for it (as the real server does).
  for (int i = 0; i < 5000 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto shutdown = [&] {
    server.stop();
    listener.join();
  };

  // "Loading": a progress dot every 100 ms.
  const std::string model = args.model_path.empty() ? "models/model.gguf" : args.model_path;
  const std::string crash = env_or(env, "STANDIN_CRASH", "");
  if (const int stall_ms = env_int(env, "STANDIN_STALL_MS", 0); stall_ms > 0) {
    if (stop.wait_for(std::chrono::milliseconds(stall_ms))) {
      shutdown();
      return 0;
    }
  }
  log_line('I', srv("load_model", "loading model '" + model + "'"));
  if (crash == "bad-model") {
    print_crash(crash, model);
    shutdown();
    return 1;
  }
  log_line('I',
           "llama_model_loader: loaded meta data with 46 key-value pairs and 851 tensors "
           "from " +
               model + " (version GGUF V3 (latest))");
  const int load_ms = env_int(env, "STANDIN_LOAD_MS", 300);
  const int ticks = std::max(1, load_ms / 100);
  for (int tick = 0; tick < ticks; ++tick) {
    if (stop.wait_for(std::chrono::milliseconds(load_ms / ticks))) {
      std::fprintf(stderr, "\n");
      log_line('I', srv("operator()", "operator(): cleaning up before exit..."));
      shutdown();
      return 0;
    }
    std::fprintf(stderr, ".");
    std::fflush(stderr);
    if (crash == "abort" && tick + 1 >= ticks / 2) {
      std::abort();
    }
  }
  std::fprintf(stderr, "\n");
  if (crash == "oom") {
    print_crash(crash, model);
    shutdown();
    return 1;
  }

  log_line('I',
           srv("load_model",
               "initializing, n_slots = " + std::to_string(total_slots(args)) +
                   ", n_ctx_slot = " + std::to_string(slot_context(args)) + ", kv_unified = '" +
                   (args.kv_unified.value_or(args.n_parallel == -1) ? "true" : "false") + "'"));
  if (args.spec_init_failed) {
    log_line('E', srv("load_model",
                      "failed to initialize speculative decoding context: the stand-in was "
                      "told to fail (STANDIN_SPEC_FAILS)"));
  }
  // What a model's buffers would hold: written once, so that every page is resident.
  std::vector<char> resident(static_cast<std::size_t>(
      std::max<long long>(0, std::atoll(env_or(env, "STANDIN_RESIDENT_BYTES", "0").c_str()))));
  std::fill(resident.begin(), resident.end(), '\1');
  asm volatile("" : : "r"(resident.data()) : "memory");  // the writes stay
  shared.ready.store(true);
  const std::int64_t ready_ns = realtime_ns();
  log_line('I', srv("llama_server", "model loaded"));
  const std::string address = "http://" + args.host + ":" + std::to_string(port);
  log_line('I', srv("llama_server", "listening on " + address));
  if (port == 8080) {
    log_line('W', srv("llama_server",
                      "NOTICE: server default port will be changed to :9931 in a "
                      "future release"));
  }
  if (const auto it = env.find("STANDIN_RECORD"); it != env.end()) {
    write_record(it->second, args_in, env, ready_ns);
  }
  if (const auto it = env.find("STANDIN_EXTRA_LOG"); it != env.end()) {
    const auto extra = gb10tune::read_text_file(it->second);
    const std::lock_guard<std::mutex> lock(g_log_mutex);
    std::fprintf(stderr, "%s", extra.value_or("").c_str());
    std::fflush(stderr);
  }

  stop.wait();
  log_line('I', srv("operator()", "operator(): cleaning up before exit..."));
  shutdown();
  return 0;
}

}  // namespace
}  // namespace standin

int main(int argc, char** argv) {
  return standin::run(argc, argv);
}
