// Reads of /proc, /sys and /etc under a root prefix, so that tests and bug reports can
// replay a captured machine (`--sysroot DIR`, or GB10TUNE_SYSROOT).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/util/expected.hpp"

namespace gb10tune::platform {

class Sysroot {
 public:
  // A root of "/" (the default) reads the live machine.
  explicit Sysroot(std::filesystem::path root = "/");

  // A described machine held in memory: `files` maps absolute paths ("/proc/meminfo") to their
  // content; directories are the paths' parents. `name` stands for it in messages.
  static Sysroot in_memory(std::string name, std::map<std::string, std::string> files);

  // True when reads go to the live machine rather than a captured tree.
  bool is_live() const { return m_live; }
  const std::filesystem::path& root() const { return m_root; }

  // The on-disk path of the absolute machine path `path` ("/proc/meminfo").
  std::filesystem::path resolve(std::string_view path) const;

  // The whole content of `path`, up to `max_bytes`; an Error naming the on-disk path and the
  // OS reason when it cannot be opened or read. Works for /proc files that report size 0.
  Expected<std::string> read_file(std::string_view path, std::size_t max_bytes = 1 << 22) const;

  // True when `path` exists (any kind of file).
  bool exists(std::string_view path) const;

  // Names of the entries of directory `path`, sorted; an Error when it cannot be listed.
  Expected<std::vector<std::string>> list_dir(std::string_view path) const;

 private:
  Expected<std::vector<std::string>> list_described(std::string_view path) const;

  std::filesystem::path m_root;
  bool m_live;
  std::shared_ptr<const std::map<std::string, std::string>> m_files;  // set: in memory
};

}  // namespace gb10tune::platform
