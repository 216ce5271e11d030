// Split models written the way gguf-split writes them, for the plan's shard reads.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gb10tune::testing {

// Writes the report model (report_model(): 64 blocks and one MTP block) split in `shards`
// files DIR/STEM-0000K-of-0000N.gguf: the metadata, a 150k-token vocabulary and the token
// embedding in shard 1, one 64 MiB q4_K tensor of the main stack in every other shard (sparse on
// disk). Returns the paths, the first shard first.
std::vector<std::filesystem::path> write_split_report_model(const std::filesystem::path& dir,
                                                            const std::string& stem,
                                                            unsigned shards);

}  // namespace gb10tune::testing
