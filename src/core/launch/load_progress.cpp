#include "gb10tune/launch/load_progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::launch {

namespace {

bool has(std::string_view line, std::string_view part) {
  return line.find(part) != std::string_view::npos;
}

}  // namespace

std::string_view load_stage_name(LoadStage stage) {
  switch (stage) {
    case LoadStage::starting:
      return "starting llama-server";
    case LoadStage::loading_model:
      return "loading model";
    case LoadStage::loading_tensors:
      return "loading tensors";
    case LoadStage::creating_context:
      return "creating the context";
    case LoadStage::warming_up:
      return "warming up";
    case LoadStage::initializing_slots:
      return "initializing slots";
    case LoadStage::loaded:
      return "model loaded, waiting for /health";
  }
  return "starting llama-server";
}

std::string LoadProgress::describe() const {
  std::string out(load_stage_name(stage));
  if (percent && stage == LoadStage::loading_tensors) {
    out += fmt::format(" {}%", *percent);
  }
  std::string figures;
  if (layers_offloaded && layers_total) {
    figures = fmt::format("{}/{} layers on the GPU", *layers_offloaded, *layers_total);
  }
  if (weights_bytes > 0) {
    figures +=
        fmt::format("{}{} of weights", figures.empty() ? "" : ", ", format_bytes(weights_bytes));
  }
  return figures.empty() ? out : fmt::format("{} ({})", out, figures);
}

void LoadLogReader::advance(LoadStage stage) {
  m_progress.stage = std::max(m_progress.stage, stage);
}

void LoadLogReader::read_line(std::string_view line) {
  if (has(line, "model loaded") || has(line, "listening on")) {
    advance(LoadStage::loaded);
  } else if (has(line, "initializing, n_slots")) {
    advance(LoadStage::initializing_slots);
  } else if (has(line, "warming up the model")) {
    advance(LoadStage::warming_up);
  } else if (has(line, "llama_context:")) {
    advance(LoadStage::creating_context);
  } else if (has(line, "load_tensors:")) {
    advance(LoadStage::loading_tensors);
    int done = 0;
    int total = 0;
    if (const auto at = line.find("offloaded ");
        at != std::string_view::npos && std::sscanf(std::string(line.substr(at)).c_str(),
                                                    "offloaded %d/%d layers", &done, &total) == 2) {
      m_progress.layers_offloaded = done;
      m_progress.layers_total = total;
    }
    for (const BufferSizeLine& buffer : buffer_size_lines(line)) {
      if (buffer.before.size() >= 6 && buffer.before.substr(buffer.before.size() - 6) == " model") {
        m_progress.weights_bytes += buffer.bytes;
      }
    }
  } else if (has(line, "loading model") || has(line, "llama_model_loader:")) {
    advance(LoadStage::loading_model);
  }
}

void LoadLogReader::feed(std::string_view chunk) {
  for (const char c : chunk) {
    if (c == '\n') {
      if (!m_partial_dots) {
        read_line(m_partial);
      }
      m_partial.clear();
      m_partial_dots = true;
      continue;
    }
    m_partial += c;
    if (c == '.' && m_partial_dots) {
      // Counted as they come: a line of dots ends only at 100%.
      ++m_dots;
      advance(LoadStage::loading_tensors);
      m_progress.percent = std::min(100, m_dots);
    } else {
      m_partial_dots = false;
    }
  }
}

}  // namespace gb10tune::launch
