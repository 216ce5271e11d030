// llama-server options that change what the memory plan sizes while the planned command
// leaves them at llama.cpp's default: given after --, in a LLAMA_ARG_* variable or in a
// config.ini, the server would hold something the plan does not know.
#pragma once

#include <string>
#include <string_view>

namespace gb10tune::launch {

// One such option.
struct MemoryOption {
  std::string_view key;         // llama-server's long name without dashes ("cache-type-k")
  std::string_view what;        // what it changes ("the K cache type")
  std::string_view own_option;  // launch's option that sets it; empty: the plan cannot follow
};

// The option whose key (FlagSpec::key()) is `key`, or nullptr.
const MemoryOption* find_memory_option(std::string_view key);

// "changes the K cache type, which the memory plan takes from launch's own --cache-type-k" or
// "changes where tensors are placed, which the memory plan does not follow".
std::string memory_option_reason(const MemoryOption& option);

}  // namespace gb10tune::launch
