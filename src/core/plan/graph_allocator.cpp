#include "gb10tune/plan/graph_allocator.hpp"

#include <limits>
#include <stdexcept>

namespace gb10tune::plan {

GraphAllocator::GraphAllocator(std::uint64_t alignment)
    : m_alignment(alignment == 0 ? 1 : alignment) {
  m_free.push_back({0, std::numeric_limits<std::uint64_t>::max() / 2});
}

void GraphAllocator::place(std::string_view name, std::uint64_t bytes) {
  if (m_placed.find(name) != m_placed.end()) {
    throw std::logic_error("graph replay: " + std::string(name) + " is placed twice");
  }
  const std::uint64_t size = (bytes + m_alignment - 1) / m_alignment * m_alignment;
  if (size == 0) {
    m_placed.emplace(std::string(name), Block{0, 0});
    return;
  }
  // The best fit among the blocks below the end (the last of equal sizes wins), else the end.
  std::size_t chosen = m_free.size() - 1;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i + 1 < m_free.size(); ++i) {
    if (m_free[i].size >= size && m_free[i].size <= best) {
      chosen = i;
      best = m_free[i].size;
    }
  }
  Block& block = m_free[chosen];
  const Block placed{block.offset, size};
  block.offset += size;
  block.size -= size;
  if (block.size == 0) {
    m_free.erase(m_free.begin() + static_cast<std::ptrdiff_t>(chosen));
  }
  m_placed.emplace(std::string(name), placed);
  if (placed.offset + placed.size > m_high_water) {
    m_high_water = placed.offset + placed.size;
    m_high_water_tensor = std::string(name);
  }
}

void GraphAllocator::free(std::string_view name) {
  const auto it = m_placed.find(name);
  if (it == m_placed.end()) {
    throw std::logic_error("graph replay: " + std::string(name) + " is freed but not placed");
  }
  const Block block = it->second;
  m_placed.erase(it);
  if (block.size == 0) {
    return;
  }
  for (std::size_t i = 0; i < m_free.size(); ++i) {
    Block& other = m_free[i];
    if (other.offset + other.size == block.offset) {  // right after a free block
      other.size += block.size;
      if (i + 1 < m_free.size() && other.offset + other.size == m_free[i + 1].offset) {
        other.size += m_free[i + 1].size;
        m_free.erase(m_free.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      }
      return;
    }
    if (block.offset + block.size == other.offset) {  // right before a free block
      other.offset = block.offset;
      other.size += block.size;
      if (i > 0 && m_free[i - 1].offset + m_free[i - 1].size == other.offset) {
        m_free[i - 1].size += other.size;
        m_free.erase(m_free.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return;
    }
  }
  auto at = m_free.begin();
  while (at != m_free.end() && at->offset < block.offset) {
    ++at;
  }
  m_free.insert(at, block);
}

void GraphAllocator::rename(std::string_view to, std::string_view from) {
  const auto it = m_placed.find(from);
  if (it == m_placed.end() || m_placed.find(to) != m_placed.end()) {
    throw std::logic_error("graph replay: cannot run " + std::string(to) + " in place of " +
                           std::string(from));
  }
  const Block block = it->second;
  m_placed.erase(it);
  m_placed.emplace(std::string(to), block);
}

}  // namespace gb10tune::plan
