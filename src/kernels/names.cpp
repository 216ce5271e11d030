// Stable ids of the bandwidth enums (compiled with and without CUDA).
#include <algorithm>

#include "gb10tune/kernels/bandwidth.hpp"

namespace gb10tune::kernels {

std::string_view to_string(Allocator allocator) {
  switch (allocator) {
    case Allocator::device:
      return "device";
    case Allocator::managed:
      return "managed";
    case Allocator::managed_prefetch:
      return "managed_prefetch";
    case Allocator::managed_advise:
      return "managed_advise";
    case Allocator::pinned_host:
      return "pinned_host";
    case Allocator::pageable_malloc:
      return "pageable_malloc";
    case Allocator::pageable_mmap:
      return "pageable_mmap";
  }
  return "unknown";
}

std::string_view to_string(Operation operation) {
  switch (operation) {
    case Operation::read:
      return "read";
    case Operation::write:
      return "write";
    case Operation::copy:
      return "copy";
    case Operation::memcpy_d2d:
      return "memcpy_d2d";
  }
  return "unknown";
}

std::string_view to_string(CaseStatus status) {
  switch (status) {
    case CaseStatus::ok:
      return "ok";
    case CaseStatus::waived:
      return "waived";
    case CaseStatus::failed:
      return "failed";
    case CaseStatus::cancelled:
      return "cancelled";
  }
  return "unknown";
}

namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> find_by_id(const std::array<Enum, N>& all, std::string_view id) {
  const auto it =
      std::find_if(all.begin(), all.end(), [id](Enum value) { return to_string(value) == id; });
  if (it == all.end())
    return std::nullopt;
  return *it;
}

}  // namespace

std::optional<Allocator> parse_allocator(std::string_view id) {
  return find_by_id(kAllAllocators, id);
}

std::optional<Operation> parse_operation(std::string_view id) {
  return find_by_id(kAllOperations, id);
}

}  // namespace gb10tune::kernels
