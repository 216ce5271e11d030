#include "gb10tune/launch/memory_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gb10tune::launch {

namespace {

constexpr std::array kMemoryOptions{
    MemoryOption{"cache-type-k", "the K cache type", "--cache-type-k"},
    MemoryOption{"cache-type-v", "the V cache type", "--cache-type-v"},
    MemoryOption{"ubatch-size", "the physical batch (it sizes the compute buffers)", "--ubatch"},
    MemoryOption{"swa-full", "the sliding-window cache size", "--swa-full"},
    MemoryOption{"kv-unified", "the KV streams", "--kvu or --no-kvu"},
    MemoryOption{"batch-size",
                 "the logical batch (it sizes the output buffer; the plan assumes "
                 "llama-server's default 2048)",
                 ""},
    MemoryOption{"kv-offload", "where the KV cache lives", ""},
    MemoryOption{"no-kv-offload", "where the KV cache lives", ""},  // older builds' key
    MemoryOption{"override-tensor", "where tensors are placed", ""},
    MemoryOption{"cpu-moe", "where the experts' weights are placed", ""},
    MemoryOption{"n-cpu-moe", "where the experts' weights are placed", ""},
    MemoryOption{"split-mode", "how the model is split across GPUs (the plan splits by layer)", ""},
    MemoryOption{"main-gpu", "which GPU holds the model with --split-mode none or row", ""},
    MemoryOption{"cache-type-k-draft", "the draft context's K cache type", ""},
    MemoryOption{"cache-type-v-draft", "the draft context's V cache type", ""},
};

}  // namespace

const MemoryOption* find_memory_option(std::string_view key) {
  const auto* found = std::find_if(kMemoryOptions.begin(), kMemoryOptions.end(),
                                   [&](const MemoryOption& o) { return o.key == key; });
  return found == kMemoryOptions.end() ? nullptr : &*found;
}

std::string memory_option_reason(const MemoryOption& option) {
  return option.own_option.empty()
             ? fmt::format("changes {}, which the memory plan does not follow", option.what)
             : fmt::format("changes {}, which the memory plan takes from launch's own {}",
                           option.what, option.own_option);
}

}  // namespace gb10tune::launch
