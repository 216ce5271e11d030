#include "gb10tune/server/server_flags.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gb10tune/platform/process.hpp"
#include "gb10tune/trust/binary_trust.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::server {

namespace {

std::string_view strip_dashes(std::string_view name) {
  while (!name.empty() && name.front() == '-') {
    name.remove_prefix(1);
  }
  return name;
}

// llama.cpp treats "_" in a long option as "-" ("--ctx_size" is "--ctx-size").
std::string normalize(std::string_view name) {
  std::string out(name);
  if (starts_with(out, "--")) {
    std::replace(out.begin(), out.end(), '_', '-');
  }
  return out;
}

// One whitespace-separated word of an option's first line, and how much space preceded it.
struct Word {
  std::string_view text;
  std::size_t gap = 0;
};

std::vector<Word> words_with_gaps(std::string_view line) {
  std::vector<Word> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const std::size_t start = i;
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    if (i == line.size()) {
      break;
    }
    const std::size_t gap = i - start;
    const std::size_t word_start = i;
    while (i < line.size() && line[i] != ' ') {
      ++i;
    }
    out.push_back({line.substr(word_start, i - word_start), gap});
  }
  return out;
}

// Whether `bare` (a spelling without dashes) negates one of `positives`: "no-mmap",
// "no-kvu", "nocb" for "cb", "ndio" for "dio", "nr" for "--repack".
bool negates(std::string_view bare, const std::vector<std::string_view>& positives) {
  if (starts_with(bare, "no-")) {
    return true;
  }
  for (const auto positive : positives) {
    if (bare == fmt::format("no{}", positive) || bare == fmt::format("n{}", positive) ||
        (bare == "nr" && positive == "repack")) {
      return true;
    }
  }
  return false;
}

// Splits the names of one option group into positive and negative spellings. Negatives exist
// only beside a name that does not start with "n": a group such as "--no-mmap" alone or
// "-nkvo, --no-kv-offload" (older builds) is one positive switch.
void classify_names(const std::vector<std::string>& names, FlagSpec& spec) {
  std::vector<std::string_view> positives;
  for (const auto& name : names) {
    if (const auto bare = strip_dashes(name); !starts_with(bare, "n")) {
      positives.push_back(bare);
    }
  }
  for (const auto& name : names) {
    const auto bare = strip_dashes(name);
    if (!positives.empty() && starts_with(bare, "n") && negates(bare, positives)) {
      spec.negative_names.push_back(name);
    } else {
      spec.names.push_back(name);
    }
  }
}

// True for an all-capitals word such as FNAME or SCALE.
bool is_placeholder(std::string_view word) {
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Parses the first line of an option: names, then a value hint separated by one space, then
// (after a wider gap) the start of the description.
FlagSpec parse_option_line(std::string_view line) {
  FlagSpec spec;
  const auto words = words_with_gaps(line);
  std::vector<std::string> names;
  std::size_t i = 0;
  bool more_names = true;
  while (i < words.size() && more_names && starts_with(words[i].text, "-")) {
    auto name = words[i].text;
    more_names = name.back() == ',';
    if (more_names) {
      name.remove_suffix(1);
    }
    names.emplace_back(name);
    ++i;
  }
  if (!more_names && i < words.size() && words[i].gap == 1) {
    spec.value_hint = std::string(words[i].text);
    ++i;
    // A second placeholder ("--lora-scaled FNAME SCALE" in older builds): a second value.
    while (i < words.size() && words[i].gap == 1 && is_placeholder(words[i].text)) {
      spec.value_hint += fmt::format(" {}", words[i].text);
      ++i;
    }
  }
  std::string description;
  for (; i < words.size(); ++i) {
    if (!description.empty()) {
      description += ' ';
    }
    description += words[i].text;
  }
  spec.description = std::move(description);
  classify_names(names, spec);
  return spec;
}

// Takes "(env: LLAMA_ARG_X)" out of a description line; returns the variable or "".
std::string take_env(std::string_view text) {
  const auto at = text.find("(env: ");
  if (at == std::string_view::npos) {
    return {};
  }
  const auto end = text.find(')', at);
  if (end == std::string_view::npos) {
    return {};
  }
  return std::string(trim(text.substr(at + 6, end - at - 6)));
}

// The choices a value hint lists: "[on|off|auto]", "{none,layer}", "none,draft-mtp,…".
std::vector<std::string_view> hint_choices(std::string_view hint) {
  if (hint.size() >= 2 && (hint.front() == '[' || hint.front() == '{' || hint.front() == '<')) {
    hint = hint.substr(1, hint.size() - 2);
  }
  std::vector<std::string_view> out;
  const char separator = hint.find('|') != std::string_view::npos ? '|' : ',';
  if (hint.find(separator) == std::string_view::npos) {
    return out;  // a free-form placeholder such as N or FNAME
  }
  for (const auto choice : split(hint, separator)) {
    out.push_back(trim(choice));
  }
  return out;
}

}  // namespace

int FlagSpec::value_count() const {
  if (value_hint.empty()) {
    return 0;
  }
  return 1 + static_cast<int>(std::count(value_hint.begin(), value_hint.end(), ' '));
}

bool FlagSpec::removed() const {
  return starts_with(description, "the argument has been removed");
}

std::string FlagSpec::key() const {
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (starts_with(*it, "--")) {
      return std::string(strip_dashes(*it));
    }
  }
  return names.empty() ? std::string() : std::string(strip_dashes(names.back()));
}

ServerFlags ServerFlags::parse_help(std::string_view help_text) {
  ServerFlags flags;
  FlagSpec* current = nullptr;
  for (const auto raw_line : split(help_text, '\n')) {
    std::string_view line = raw_line;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (starts_with(line, "-") && !starts_with(line, "---")) {
      auto spec = parse_option_line(line);
      if (spec.names.empty()) {
        current = nullptr;
        continue;
      }
      spec.env = take_env(spec.description);
      flags.m_flags.push_back(std::move(spec));
      current = &flags.m_flags.back();
    } else if (current != nullptr && starts_with(line, " ") && !trim(line).empty()) {
      const auto text = trim(line);
      if (const auto env = take_env(text); !env.empty()) {
        current->env = env;
        continue;
      }
      if (!current->description.empty()) {
        current->description += ' ';
      }
      current->description += text;
    } else {
      current = nullptr;
    }
  }
  return flags;
}

const FlagSpec* ServerFlags::find(std::string_view name) const {
  const auto wanted = normalize(name);
  for (const auto& spec : m_flags) {
    for (const auto* list : {&spec.names, &spec.negative_names}) {
      if (std::find(list->begin(), list->end(), wanted) != list->end()) {
        return &spec;
      }
    }
  }
  return nullptr;
}

const FlagSpec* ServerFlags::find_by_env(std::string_view env) const {
  if (env.empty()) {
    return nullptr;
  }
  for (const auto& spec : m_flags) {
    if (spec.env == env) {
      return &spec;
    }
  }
  return nullptr;
}

const FlagSpec* ServerFlags::find_by_key(std::string_view key) const {
  if (const auto* by_env = find_by_env(key)) {
    return by_env;
  }
  for (const auto& spec : m_flags) {
    for (const auto* list : {&spec.names, &spec.negative_names}) {
      for (const auto& name : *list) {
        if (strip_dashes(name) == key) {
          return &spec;
        }
      }
    }
  }
  return nullptr;
}

bool ServerFlags::is_negative(const FlagSpec& spec, std::string_view name) {
  const auto wanted = normalize(name);
  return std::find(spec.negative_names.begin(), spec.negative_names.end(), wanted) !=
         spec.negative_names.end();
}

bool ServerFlags::accepts_value(std::string_view name, std::string_view value) const {
  const auto* spec = find(name);
  if (spec == nullptr || !spec->takes_value() || spec->removed()) {
    return false;
  }
  const auto choices = hint_choices(spec->value_hint);
  if (choices.empty()) {
    return true;
  }
  // --spec-type takes a comma-separated list of its choices.
  for (const auto part : split(value, ',')) {
    if (std::find(choices.begin(), choices.end(), trim(part)) == choices.end()) {
      return false;
    }
  }
  return true;
}

Expected<ServerFlags> read_server_flags(const std::string& server_path,
                                        std::chrono::milliseconds timeout) {
  const auto program = trust::runnable_binary(server_path);
  if (!program) {
    return program.error();
  }
  const auto run = platform::run_capture({*program, "--help"}, timeout, 1 << 20);
  if (!run) {
    return Error{fmt::format("cannot run {} --help: {}; give the llama-server binary with "
                             "--llama-server PATH",
                             server_path, run.error().message),
                 ExitCode::usage};
  }
  if (run->timed_out || run->exit_status != 0) {
    const auto why = run->timed_out     ? std::string("it did not finish")
                     : run->signal != 0 ? fmt::format("it was killed by signal {}", run->signal)
                                        : fmt::format("it exited with status {}", run->exit_status);
    return Error{fmt::format("{} --help failed ({}); is it a working llama-server build? Last "
                             "output: {}",
                             server_path, why, trim(run->output.substr(0, 400))),
                 ExitCode::usage};
  }
  auto flags = ServerFlags::parse_help(run->output);
  if (flags.find("--port") == nullptr || flags.find("--model") == nullptr) {
    return Error{fmt::format("{} --help lists no --model/--port options: it is not a "
                             "llama-server binary",
                             server_path),
                 ExitCode::usage};
  }
  return flags;
}

}  // namespace gb10tune::server
