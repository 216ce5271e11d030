// Which device holds which layer when llama-server runs with --rpc: RPC devices come first in
// its device list (in --rpc order, each worker's devices in order), then the head's own GPUs;
// layers are cut by free memory, or by --tensor-split when given (llama-model.cpp,
// load_tensors).
#pragma once

#include <cstdint>
#include <vector>

namespace gb10tune::rpc {

// The device of every repeating layer and of the output layer.
struct LayerSplit {
  std::vector<std::size_t> layer_device;  // one entry per repeating layer
  std::size_t output_device = 0;          // the output layer (the "n_layer-th" one)
  // Layers per device (the output layer not counted).
  std::vector<std::uint32_t> layers_per_device() const;
};

// Splits `n_layers` repeating layers plus the output layer over devices whose weights are
// `shares` (free bytes, or --tensor-split values; all zero means an even split), all layers
// offloaded (-ngl ≥ n_layers + 1), exactly as llama.cpp does: cumulative shares normalized to
// split points, layer i goes to the first device whose split point exceeds i / (n_layers + 1).
// `shares` must not be empty.
LayerSplit split_layers(const std::vector<double>& shares, std::uint32_t n_layers);

}  // namespace gb10tune::rpc
