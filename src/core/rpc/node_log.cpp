// Reading the head's buffer lines per node: the buffer's name is the word before its kind.
#include "gb10tune/rpc/node_log.hpp"

#include <cmath>
#include <string>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::rpc {

namespace {

// The last word of `text` ("load_tensors:  RPC0[h:p]" → "RPC0[h:p]").
std::string_view node_log_last_word(std::string_view text) {
  while (!text.empty() && text.back() == ' ') {
    text.remove_suffix(1);
  }
  const auto space = text.find_last_of(' ');
  return space == std::string_view::npos ? text : text.substr(space + 1);
}

}  // namespace

std::optional<std::vector<NodeLogBuffers>> node_buffers_from_log(std::string_view log_text,
                                                                 const NodePlan& nodes) {
  if (nodes.nodes.empty()) {
    return std::nullopt;
  }
  std::vector<NodeLogBuffers> out(nodes.nodes.size());
  const std::size_t head = nodes.nodes.size() - 1;
  // The node of a worker's endpoint (the node's name).
  const auto node_of_rpc = [&](const std::string& endpoint) -> std::optional<std::size_t> {
    for (std::size_t n = 0; n < head; ++n) {
      if (nodes.nodes[n].node == endpoint) {
        return n;
      }
    }
    return std::nullopt;
  };
  int lines = 0;
  for (const BufferSizeLine& line : buffer_size_lines(log_text)) {
    std::string_view before = line.before;
    const std::string_view kind = node_log_last_word(before);
    before.remove_suffix(kind.size());
    const std::string_view name = node_log_last_word(before);
    std::size_t node = head;
    if (const auto endpoint = rpc_buffer_endpoint(name)) {
      const auto owner = node_of_rpc(*endpoint);
      if (!owner) {
        return std::nullopt;  // another topology than the plan's
      }
      node = *owner;
    }
    NodeLogBuffers& target = out[node];
    if (kind == "model") {
      target.model_bytes += line.bytes;
    } else if (kind == "KV" || kind == "RS") {
      target.kv_bytes += line.bytes;
    } else if (kind == "compute") {
      target.compute_bytes += line.bytes;
    } else if (kind == "output") {
      target.output_bytes += line.bytes;
    } else {
      continue;
    }
    ++target.lines;
    ++lines;
  }
  if (lines == 0) {
    return std::nullopt;
  }
  return out;
}

}  // namespace gb10tune::rpc
