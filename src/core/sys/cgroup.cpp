#include "gb10tune/sys/cgroup.hpp"

#include "gb10tune/util/strings.hpp"

namespace gb10tune::sys {

namespace {

// A limit file's value: a number of bytes, or nullopt for "max" / junk / absurdly large
// (cgroup v1 writes 2^63 rounded to the page size for "no limit").
std::optional<std::uint64_t> read_limit(const platform::Sysroot& root, const std::string& path) {
  const auto text = root.read_file(path, 4096);
  if (!text) {
    return std::nullopt;
  }
  const auto value = parse_u64(trim(*text));
  if (!value || *value >= (std::uint64_t{1} << 62)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

CgroupMemory read_cgroup_memory(const platform::Sysroot& root) {
  CgroupMemory memory;
  const auto membership = root.read_file("/proc/self/cgroup", 64 * 1024);
  std::string v1_path;
  if (membership) {
    for (std::string_view line : split(*membership, '\n')) {
      const auto fields = split(trim(line), ':');
      if (fields.size() < 3) {
        continue;
      }
      if (fields[0] == "0" && fields[1].empty()) {
        memory.path = std::string(fields[2]);  // the unified (v2) hierarchy
      } else if (fields[1] == "memory" || fields[1].find("memory") != std::string_view::npos) {
        v1_path = std::string(fields[2]);
      }
    }
  }
  auto join = [](const std::string& base, const std::string& sub) {
    return sub.empty() || sub == "/" ? base : base + sub;
  };
  if (!memory.path.empty()) {
    // Walk up: the tightest limit of any ancestor applies.
    std::string path = memory.path;
    while (true) {
      const auto limit = read_limit(root, join("/sys/fs/cgroup", path) + "/memory.max");
      if (limit && (!memory.limit_bytes || *limit < *memory.limit_bytes)) {
        memory.limit_bytes = limit;
      }
      if (path.empty() || path == "/") {
        break;
      }
      path = path.substr(0, path.find_last_of('/'));
    }
    memory.usage_bytes = read_limit(root, join("/sys/fs/cgroup", memory.path) + "/memory.current");
  } else if (!v1_path.empty()) {
    memory.path = v1_path;
    memory.limit_bytes =
        read_limit(root, join("/sys/fs/cgroup/memory", v1_path) + "/memory.limit_in_bytes");
    memory.usage_bytes =
        read_limit(root, join("/sys/fs/cgroup/memory", v1_path) + "/memory.usage_in_bytes");
  }
  return memory;
}

}  // namespace gb10tune::sys
