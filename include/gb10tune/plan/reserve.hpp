// The memory kept for the system, shared by every command that sizes against MemAvailable
// (launch's plan, probe's budgets, bench's host buffers, watch's warning).
#pragma once

#include <cstdint>

namespace gb10tune::plan {

// The default system reserve: memory the OS, the desktop and the page cache keep (K13).
inline constexpr std::uint64_t kDefaultReserveBytes = 12'000'000'000ull;

}  // namespace gb10tune::plan
