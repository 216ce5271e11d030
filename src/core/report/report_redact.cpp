#include "gb10tune/report/report_redact.hpp"

#include <cctype>

namespace gb10tune::report {

namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Replaces each occurrence of `word` that stands alone (no word character on either side).
void replace_word(std::string& text, std::string_view word, std::string_view by) {
  if (word.empty()) {
    return;
  }
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at)) {
    const std::size_t end = at + word.size();
    const bool alone =
        (at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end]));
    if (alone) {
      text.replace(at, word.size(), by);
      at += by.size();
    } else {
      at = end;
    }
  }
}

// Replaces `prefix` + NAME (up to the next '/', quote or space) by "~".
void replace_homes(std::string& text, std::string_view prefix, bool with_name) {
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
    if (at > 0 && word_char(text[at - 1])) {
      at += prefix.size();
      continue;
    }
    std::size_t end = at + prefix.size();
    if (with_name) {
      while (end < text.size() && text[end] != '/' && text[end] != '"' && text[end] != ' ') {
        ++end;
      }
    } else if (end < text.size() && text[end] != '/' && text[end] != ' ' && text[end] != '"') {
      at = end;  // "/rootfs": not the root's home
      continue;
    }
    text.replace(at, end - at, "~");
    at += 1;
  }
}

void redact_json(nlohmann::json& value, const Identity& identity) {
  if (value.is_string()) {
    value = redact_text(value.get<std::string>(), identity);
  } else if (value.is_structured()) {
    for (auto& item : value) {
      redact_json(item, identity);
    }
  }
}

void redact_document(SavedDocument& part, const Identity& identity) {
  part.file = redact_text(part.file.string(), identity);
  redact_json(part.doc, identity);
}

}  // namespace

std::string redact_text(std::string_view text, const Identity& identity) {
  std::string out(text);
  if (identity.home.size() > 1) {
    for (std::size_t at = out.find(identity.home); at != std::string::npos;
         at = out.find(identity.home, at + 1)) {
      out.replace(at, identity.home.size(), "~");
    }
  }
  replace_homes(out, "/home/", true);
  replace_homes(out, "/Users/", true);
  replace_homes(out, "/root", false);
  if (!identity.host.empty() && identity.host != "localhost") {
    replace_word(out, identity.host, "<host>");
    replace_word(out, identity.host.substr(0, identity.host.find('.')), "<host>");
  }
  if (identity.user.size() >= 3 && identity.user != "root") {
    replace_word(out, identity.user, "<user>");
  }
  return out;
}

void redact_bundle(ReportBundle& bundle, const Identity& identity) {
  bundle.state_dir = redact_text(bundle.state_dir.string(), identity);
  for (auto* part : {&bundle.probe, &bundle.bench, &bundle.launch, &bundle.verify, &bundle.tune}) {
    if (*part) {
      redact_document(**part, identity);
    }
  }
  for (SavedDocument& run : bundle.runs) {
    redact_document(run, identity);
  }
  for (std::string& problem : bundle.problems) {
    problem = redact_text(problem, identity);
  }
}

}  // namespace gb10tune::report
