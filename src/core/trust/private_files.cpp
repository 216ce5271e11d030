#include "gb10tune/trust/private_files.hpp"

#include "gb10tune/platform/file_facts.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/trust/path_rules.hpp"

namespace gb10tune::trust {

namespace fs = std::filesystem;

namespace {

// State files are small; a larger one is not gb10tune's.
constexpr std::size_t kMaxStateFile = 64u << 20;

// Carries out judge_private's verdict on `facts`.
Status apply_verdict(const platform::PathFacts& facts, bool directory) {
  const PrivateVerdict verdict = judge_private(facts, directory, current_caller());
  switch (verdict.action) {
    case PrivateAction::keep:
      return {};
    case PrivateAction::tighten:
      if (const Status set = platform::set_mode(facts.path, verdict.mode); !set) {
        return Error{set.error().message, ExitCode::failed};
      }
      return {};
    case PrivateAction::refuse:
      break;
  }
  return Error{verdict.message, ExitCode::failed};
}

}  // namespace

Status check_private_dir(const fs::path& dir) {
  const auto facts = platform::lstat_path(dir);
  if (!facts) {
    return Error{facts.error().message, ExitCode::failed};
  }
  if (!*facts) {
    return {};
  }
  return apply_verdict(**facts, /*directory=*/true);
}

Status ensure_private_dir(const fs::path& dir) {
  if (const Status made = platform::make_private_dir(dir); !made) {
    return made;
  }
  return check_private_dir(dir);
}

Status check_state_dir(const fs::path& dir) {
  if (const Status checked = check_private_dir(dir); !checked) {
    return checked;
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return {};  // absent: nothing to believe yet
  }
  const auto entries = platform::list_directory(dir);
  if (!entries) {
    return Error{entries.error().message, ExitCode::failed};
  }
  for (const platform::PathFacts& entry : *entries) {
    if (const Status checked = apply_verdict(entry, entry.is_directory()); !checked) {
      return checked;
    }
  }
  return {};
}

Expected<fs::path> private_state_dir(const platform::Environment& env) {
  auto dir = platform::state_dir(env);
  if (!dir) {
    return dir;
  }
  if (const Status checked = check_state_dir(*dir); !checked) {
    return checked.error();
  }
  return dir;
}

Expected<std::optional<std::string>> read_private_file(const fs::path& path) {
  auto opened = platform::read_file_nofollow(path, kMaxStateFile);
  if (!opened) {
    return Error{opened.error().message, ExitCode::failed};
  }
  if (!*opened) {
    return std::optional<std::string>();
  }
  if (const Status checked = apply_verdict((*opened)->facts, /*directory=*/false); !checked) {
    return checked.error();
  }
  return std::optional<std::string>(std::move((*opened)->content));
}

}  // namespace gb10tune::trust
