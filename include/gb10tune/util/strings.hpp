// Small string helpers shared by the parsers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gb10tune {

// `text` without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view text);

// Splits `text` at every `separator`; keeps empty fields.
std::vector<std::string_view> split(std::string_view text, char separator);

// Splits `text` at runs of blanks; never returns empty fields.
std::vector<std::string_view> split_words(std::string_view text);

// Parses a whole decimal (or 0x-prefixed hexadecimal) unsigned integer; nullopt on any junk
// or overflow.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// `text` with ASCII letters in lower case (HTTP header names, URL schemes).
std::string ascii_lower(std::string_view text);

// "1.5 GiB"-style rendering of a byte count (binary units).
std::string format_bytes(std::uint64_t bytes);

// "80.0 GB"-style rendering with decimal units (what vendors print).
std::string format_bytes_si(std::uint64_t bytes);

// True when `text` starts with `prefix`.
constexpr bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace gb10tune

namespace gb10tune {

// Word-wraps `text` at `width` columns, prefixing every line with `indent`; words longer
// than a line stay whole. Ends without a newline.
std::string wrap_text(std::string_view text, std::size_t width, std::string_view indent);

}  // namespace gb10tune

namespace gb10tune {

// Parses a size: a number (fractions allowed) with an optional unit. K, M, G, T and KiB, MiB,
// GiB, TiB are binary (1G = 2^30 bytes); KB, MB, GB, TB are decimal; B or nothing is bytes.
// nullopt for junk, a negative or zero size, or overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace gb10tune

namespace gb10tune {

// The figure llama.cpp prints before "MiB" ("  1858.63 MiB" after a buffer line's "= "), in
// bytes: leading spaces skipped, digits and a point, then "MiB" later in `text`; nullopt when
// malformed.
std::optional<std::uint64_t> parse_mib_figure(std::string_view text);

// One "<before> buffer size = N MiB" line of a llama.cpp log: the text before " buffer size = "
// ("llama_kv_cache:        CPU KV") and the figure in bytes.
struct BufferSizeLine {
  std::string_view before;
  std::uint64_t bytes = 0;
};

// Every such line of `log_text` whose figure parses, in order ("compute buffer size is …"
// debug lines have no " = " and are not among them).
std::vector<BufferSizeLine> buffer_size_lines(std::string_view log_text);

// Block indices as ranges: {0,1,2,3,5} → "0-3, 5"; "none" when empty.
std::string index_ranges(const std::vector<std::uint32_t>& indices);

// A duration as messages name a deadline: "5 s" for whole seconds, else "300 ms".
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace gb10tune
