// llama.cpp's layer split, in float like llama.cpp (the split points are floats there, and a
// layer on a boundary must land where llama.cpp puts it).
#include "gb10tune/rpc/layer_split.hpp"

#include <algorithm>

namespace gb10tune::rpc {

std::vector<std::uint32_t> LayerSplit::layers_per_device() const {
  std::size_t devices = output_device + 1;
  for (const auto device : layer_device) {
    devices = std::max(devices, device + 1);
  }
  std::vector<std::uint32_t> counts(devices, 0);
  for (const auto device : layer_device) {
    ++counts[device];
  }
  return counts;
}

LayerSplit split_layers(const std::vector<double>& shares, std::uint32_t n_layers) {
  const std::size_t n = shares.size();
  const bool all_zero = std::all_of(shares.begin(), shares.end(), [](double s) { return s == 0; });
  std::vector<float> splits(n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    sum += all_zero ? 1.0f : static_cast<float>(shares[i]);
    splits[i] = sum;
  }
  for (auto& split : splits) {
    split /= sum;
  }
  const int act_layers = static_cast<int>(n_layers) + 1;
  const auto device_of = [&](int il) {
    const float at = static_cast<float>(il) / static_cast<float>(act_layers);
    const auto index = static_cast<std::size_t>(std::upper_bound(splits.begin(), splits.end(), at) -
                                                splits.begin());
    return std::min(index, n - 1);
  };
  LayerSplit out;
  for (std::uint32_t il = 0; il < n_layers; ++il) {
    out.layer_device.push_back(device_of(static_cast<int>(il)));
  }
  out.output_device = device_of(static_cast<int>(n_layers));
  return out;
}

}  // namespace gb10tune::rpc
