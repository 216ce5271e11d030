#include "gb10tune/plan/split_copies.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gb10tune::plan {

namespace {

constexpr std::string_view kWeightCopy = "weight_copy";

}  // namespace

SplitCopies::SplitCopies(const model::ModelFacts& model, const GraphShape& shape,
                         std::uint64_t tokens, const InputCopies& inputs)
    : m_shape(shape),
      m_inputs(inputs),
      m_host_output(shape.host_output),
      m_v_width_max(model.v_width_max),
      m_tokens(tokens) {
  for (const model::LayerFacts& layer : model.layers) {
    if (!layer.mtp) {
      m_last_block = std::max(m_last_block, layer.index);
    }
  }
  m_host_blocks = std::min(shape.host_blocks, m_last_block + 1);
  for (const auto& span : model.tensor_spans) {
    const bool host = span.layer >= 0 ? span.layer < static_cast<std::int64_t>(m_host_blocks)
                                      : span.layer == model::ModelFacts::kOutputLayer;
    if (host) {
      m_weights.emplace(span.name, span.bytes);
    }
  }
}

bool SplitCopies::copies(std::uint32_t block, std::uint64_t rows) const {
  return in_host(block) && m_tokens >= kOpOffloadMinRows && rows >= kOpOffloadMinRows;
}

std::string SplitCopies::tensor_name(std::uint32_t block, std::string_view role) {
  return block == kOutputBlock ? fmt::format("{}.weight", role)
                               : fmt::format("blk.{}.{}.weight", block, role);
}

bool SplitCopies::has(std::uint32_t block, std::string_view role) const {
  return in_host(block) && m_weights.find(tensor_name(block, role)) != m_weights.end();
}

void SplitCopies::before(GraphAllocator& a, std::uint32_t block, std::string_view role,
                         std::uint64_t rows) {
  if (!copies(block, rows)) {
    return;
  }
  const auto it = m_weights.find(tensor_name(block, role));
  a.place(kWeightCopy, it == m_weights.end() ? 0 : it->second);
}

void SplitCopies::after(GraphAllocator& a, std::uint32_t block, std::uint64_t rows) {
  if (copies(block, rows)) {
    a.free(kWeightCopy);
  }
}

void SplitCopies::inputs_at(GraphAllocator& a, SplitPoint point, std::uint32_t block) {
  if (!any()) {
    return;
  }
  const bool gpu_blocks_follow = m_host_blocks <= m_last_block;
  const auto once = [&](std::size_t slot, std::string_view name, std::uint64_t bytes) {
    if (!m_placed[slot]) {
      m_placed[slot] = true;
      a.place(name, bytes);
    }
  };
  switch (point) {
    case SplitPoint::first_query:
      once(0, "inp_pos_copy", m_inputs.positions);
      return;
    case SplitPoint::first_attention:
      once(1, "inp_mask_copy", m_inputs.masks);
      return;
    case SplitPoint::last_host_down:
      // The split of the last CPU block's down projection runs on through every GPU block: it
      // copies what only they read (the cache writes' row indices) and the output ids.
      if (gpu_blocks_follow && block + 1 == m_host_blocks) {
        once(2, "inp_k_idx_copy", m_inputs.k_indices);
        once(3, "inp_v_idx_copy", m_inputs.v_indices);
        once(4, "inp_out_ids_copy", m_inputs.output_ids);
      }
      return;
    case SplitPoint::last_output_proj:
      if (!gpu_blocks_follow && block == m_last_block) {
        once(4, "inp_out_ids_copy", m_inputs.output_ids);
      }
      return;
  }
}

std::uint64_t SplitCopies::cache_copy_bytes(const model::LayerFacts& layer, bool v) const {
  const std::uint64_t cells = layer.sliding_window ? m_shape.swa_cells : m_shape.full_cells;
  const gguf::GgmlType type = v ? m_shape.cache_v : m_shape.cache_k;
  // Without flash attention V is stored transposed at the widest layer's width.
  const std::uint64_t width =
      !v ? layer.k_width
         : (m_shape.flash_attention ? layer.v_width
                                    : std::max<std::uint64_t>(layer.v_width, m_v_width_max));
  const std::uint64_t row = gguf::ggml_bytes(type, width).value_or(width * 2);
  return row * cells * std::max(1u, m_shape.streams);
}

}  // namespace gb10tune::plan
