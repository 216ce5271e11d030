#include "gb10tune/launch/start_failure.hpp"

#include <array>
#include <vector>

namespace gb10tune::launch {

namespace {

// Messages of llama.cpp (common/arg.cpp, tools/server, ggml, src/llama*.cpp) that name a cause.
constexpr std::array<std::string_view, 5> kUnknownFlag{
    "error: invalid argument:",          // common_params_parse: an option the build lacks
    "the argument has been removed",     // arg_removed(): e.g. --draft-max (K15)
    "error while handling argument",     // a value the option rejects
    "error while handling environment",  // the same for a LLAMA_ARG_* variable
    "expected value for argument",       // an option given without its value
};

constexpr std::array<std::string_view, 3> kPortInUse{
    "couldn't bind HTTP server socket",  // server-http.cpp
    "Address already in use",
    "exiting due to HTTP server error",
};

constexpr std::array<std::string_view, 9> kOutOfMemory{
    "cudaMalloc failed: out of memory",  // ggml-cuda: the device (or unified) pool is full
    "CUDA error: out of memory",
    "ErrorOutOfDeviceMemory",                  // Vulkan
    "failed to allocate buffer for kv cache",  // llama_init_from_model
    "failed to allocate compute",              // compute buffers (pp/tg)
    "unable to allocate",                      // llama_model_load: unable to allocate CUDA0 buffer
    "failed to allocate",                      // ggml-backend / alloc_tensor_range
    "std::bad_alloc",
    "Cannot allocate memory",
};

constexpr std::array<std::string_view, 7> kBadModel{
    "gguf_init_from_file",  // invalid magic, truncated header, failed to open
    "invalid magic characters",   "failed to open GGUF file",
    "error loading model",  // llama_model_load: error loading model: …
    "failed to load model",       "tensor data is not within the file bounds",
    "unknown model architecture",
};

template <std::size_t N>
std::string_view first_match(std::string_view text, const std::array<std::string_view, N>& needles,
                             std::size_t& at) {
  at = std::string_view::npos;
  std::string_view found;
  for (std::string_view needle : needles) {
    const std::size_t pos = text.find(needle);
    if (pos != std::string_view::npos && pos < at) {
      at = pos;
      found = needle;
    }
  }
  return found;
}

template <std::size_t N>
bool contains_any(std::string_view text, const std::array<std::string_view, N>& needles) {
  std::size_t at = 0;
  return !first_match(text, needles, at).empty();
}

// The whole line around position `at` of `text`.
std::string line_at(std::string_view text, std::size_t at) {
  const std::size_t begin = text.rfind('\n', at);
  const std::size_t start = begin == std::string_view::npos ? 0 : begin + 1;
  const std::size_t end = text.find('\n', at);
  return std::string(
      text.substr(start, end == std::string_view::npos ? text.size() - start : end - start));
}

}  // namespace

std::string_view failure_name(StartFailure failure) {
  switch (failure) {
    case StartFailure::out_of_memory:
      return "out of memory";
    case StartFailure::unknown_flag:
      return "unknown flag";
    case StartFailure::bad_model:
      return "bad model file";
    case StartFailure::port_in_use:
      return "port in use";
    case StartFailure::crashed:
      return "crashed";
    case StartFailure::timed_out:
      return "timed out";
    case StartFailure::interrupted:
      return "interrupted";
    case StartFailure::spawn_failed:
      return "could not be started";
  }
  return "unknown";
}

StartFailure classify_failure(std::string_view log_tail, bool timed_out) {
  if (timed_out) {
    return StartFailure::timed_out;
  }
  // Option errors come first: the server stops before it allocates or binds anything.
  if (contains_any(log_tail, kUnknownFlag)) {
    return StartFailure::unknown_flag;
  }
  if (contains_any(log_tail, kPortInUse)) {
    return StartFailure::port_in_use;
  }
  // An allocation failure makes model loading fail too ("error loading model: unable to
  // allocate …"): memory is the cause.
  if (contains_any(log_tail, kOutOfMemory)) {
    return StartFailure::out_of_memory;
  }
  if (contains_any(log_tail, kBadModel)) {
    return StartFailure::bad_model;
  }
  return StartFailure::crashed;
}

std::string failure_advice(StartFailure failure) {
  switch (failure) {
    case StartFailure::out_of_memory:
      return "The model, its KV cache and the compute buffers did not fit in the memory the "
             "server could allocate. Lower --ctx-size or the number of slots (-np), use a "
             "smaller quantization, or stop other programs that hold GPU memory; `gb10tune "
             "launch --dry-run` shows the memory plan.";
    case StartFailure::unknown_flag:
      return "This llama-server build rejected an option (options change between llama.cpp "
             "builds, K15); the log line below names it. Drop or rename the option, or rebuild "
             "llama.cpp; `llama-server --help` lists what this build accepts.";
    case StartFailure::bad_model:
      return "The model file could not be loaded: it is missing, truncated, or not a GGUF file "
             "this build understands. Check the path, re-download the file, or update "
             "llama.cpp for a new architecture.";
    case StartFailure::port_in_use:
      return "Another program already listens on the server's address and port. Stop it "
             "(`gb10tune stop`, or find it with `ss -ltnp`) or choose another --port.";
    case StartFailure::crashed:
      return "The server exited before it was ready; the log lines below show what it did "
             "last. Run the printed command by hand to see the whole output.";
    case StartFailure::timed_out:
      return "The server did not answer /health with 200, and its log showed no progress, "
             "within the timeout. Loading a large model through mmap can be slow (K19); check "
             "the log, or raise the timeout.";
    case StartFailure::interrupted:
      return "Interrupted: the server was stopped.";
    case StartFailure::spawn_failed:
      return "The llama-server binary could not be executed. Check that the path exists, is "
             "executable and was built for this machine.";
  }
  return {};
}

std::string failure_evidence(std::string_view log_tail, StartFailure failure) {
  std::size_t at = std::string_view::npos;
  switch (failure) {
    case StartFailure::unknown_flag:
      first_match(log_tail, kUnknownFlag, at);
      break;
    case StartFailure::port_in_use:
      first_match(log_tail, kPortInUse, at);
      break;
    case StartFailure::out_of_memory:
      first_match(log_tail, kOutOfMemory, at);
      break;
    case StartFailure::bad_model:
      first_match(log_tail, kBadModel, at);
      break;
    default:
      break;
  }
  return at == std::string_view::npos ? std::string() : line_at(log_tail, at);
}

std::string last_lines(std::string_view text, std::size_t count) {
  if (count == 0) {
    return {};
  }
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') {
    --end;  // the final newline does not start another line
  }
  std::size_t start = end;
  std::size_t lines = 0;
  while (start > 0) {
    const std::size_t nl = text.rfind('\n', start - 1);
    ++lines;
    if (nl == std::string_view::npos) {
      start = 0;
      break;
    }
    if (lines == count) {
      start = nl + 1;
      break;
    }
    start = nl;
  }
  return std::string(text.substr(start, end - start));
}

}  // namespace gb10tune::launch
