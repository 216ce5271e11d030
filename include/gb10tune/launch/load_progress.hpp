// What llama-server's log says about a model load in progress, read as the log grows: the
// stage, and the figures the log shows (percent loaded, layers offloaded, weights' bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gb10tune::launch {

// The stages of a start, in the order llama-server's log shows them.
enum class LoadStage {
  starting,            // nothing about the model yet
  loading_model,       // "load_model: loading model '…'", "llama_model_loader: …"
  loading_tensors,     // "load_tensors: loading model tensors" (-lv 4), or progress dots
  creating_context,    // "llama_context: constructing llama_context" (-lv 4)
  warming_up,          // "warming up the model with an empty run"
  initializing_slots,  // "load_model: initializing, n_slots = …"
  loaded,              // "model loaded" / "listening on": /health turns 200
};

// "loading model", "loading tensors", … for a status line.
std::string_view load_stage_name(LoadStage stage);

// The progress read so far.
struct LoadProgress {
  LoadStage stage = LoadStage::starting;
  // llama.cpp's default load callback prints one '.' per percent loaded (a newline at 100).
  std::optional<int> percent;
  // "load_tensors: offloaded N/M layers to GPU" (-lv 4).
  std::optional<int> layers_offloaded;
  std::optional<int> layers_total;
  // The "… model buffer size = N MiB" lines (-lv 4), added up.
  std::uint64_t weights_bytes = 0;

  // The stage and the figures known: "loading tensors 37% (4/4 layers on the GPU, 1.2 GiB of
  // weights)".
  std::string describe() const;
};

// Reads a log in the chunks it grows by; lines may be split across chunks.
class LoadLogReader {
 public:
  // Takes the next bytes of the log. Never fails; unknown lines are ignored.
  void feed(std::string_view chunk);
  const LoadProgress& progress() const { return m_progress; }

 private:
  void read_line(std::string_view line);
  void advance(LoadStage stage);

  LoadProgress m_progress;
  std::string m_partial;       // the last line, not ended yet
  bool m_partial_dots = true;  // m_partial holds progress dots only (or nothing)
  int m_dots = 0;              // progress dots so far
};

}  // namespace gb10tune::launch
