#include "gb10tune/manual/man_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::manual {

namespace {

// The first sentence of `text` (up to ": " or ". "), for the NAME line.
std::string_view name_line_text(std::string_view text) {
  const std::size_t stop = std::min(text.find(". "), text.find(": "));
  return stop == std::string_view::npos ? text : text.substr(0, stop);
}

std::string upper_case_name(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; });
  return text;
}

// "\fB\-m\fR, \fB\-\-model\fR \fIFILE\fR".
std::string roff_option_heading(const OptionEntry& option) {
  std::string heading;
  for (const std::string& name : option.names) {
    heading += fmt::format("{}\\fB{}\\fR", heading.empty() ? "" : ", ", roff_escape(name));
  }
  if (!option.value_text.empty()) {
    heading += fmt::format(" \\fI{}\\fR", roff_escape(option.value_text));
  }
  return heading;
}

std::string roff_paragraphs(std::string_view text) {
  std::string out;
  for (const std::string_view line : split(text, '\n')) {
    if (!trim(line).empty()) {
      out += fmt::format(".PP\n{}\n", roff_escape(trim(line)));
    }
  }
  return out;
}

std::string roff_synopsis(const CommandEntry& command) {
  std::string out = fmt::format(".SH SYNOPSIS\n.B {}\n", roff_escape(command_name(command, ' ')));
  if (!command.subcommands.empty()) {
    out += "\\fICOMMAND\\fR ";
  }
  out += "[\\fIOPTIONS\\fR]";
  for (const std::string& positional : command.positionals) {
    const bool optional = positional.starts_with('[');
    std::string_view word = positional;
    if (optional) {
      word = word.substr(1, word.size() - 2);
    }
    const bool after_dashes = word.starts_with("-- ");
    if (after_dashes) {
      word.remove_prefix(3);
    }
    const bool many = word.ends_with("...");
    if (many) {
      word.remove_suffix(3);
    }
    const std::string text = fmt::format("{}\\fI{}\\fR{}", after_dashes ? "\\fB\\-\\-\\fR " : "",
                                         roff_escape(word), many ? "..." : "");
    out += optional ? " [" + text + "]" : " " + text;
  }
  return out + "\n";
}

std::string roff_options_section(const CommandEntry& command) {
  std::string out = ".SH OPTIONS\n";
  for (const OptionEntry& option : command.options) {
    out += fmt::format(".TP\n{}\n{}\n", roff_option_heading(option), roff_escape(option.help));
  }
  return out;
}

std::string roff_commands_section(const CommandEntry& command) {
  if (command.subcommands.empty()) {
    return "";
  }
  std::string out = ".SH COMMANDS\n";
  for (const CommandEntry& sub : command.subcommands) {
    out += fmt::format(".TP\n\\fB{}\\fR\n{} See \\fB{}\\fR(1).\n", roff_escape(sub.path.back()),
                       roff_escape(sub.description), roff_escape(command_name(sub, '-')));
  }
  return out;
}

std::string roff_see_also(const CommandEntry& root, const CommandEntry& command) {
  std::string out;
  for (const CommandEntry* other : all_commands(root)) {
    if (other != &command) {
      out += fmt::format("{}\\fB{}\\fR(1)", out.empty() ? "" : ",\n",
                         roff_escape(command_name(*other, '-')));
    }
  }
  return ".SH SEE ALSO\n" + out + "\n.PP\nThe README and docs/ under /usr/share/doc/gb10tune.\n";
}

}  // namespace

std::string roff_escape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (line_start && (c == '.' || c == '\'')) {
      out += "\\&";
    }
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // UTF-8 as roff's \[uXXXX], so that groff needs no preprocessor for "…" or "×".
      const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
      std::uint32_t code = c & (0x3FU >> extra);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k) {
        code = (code << 6) | (static_cast<unsigned char>(text[++i]) & 0x3FU);
      }
      out += fmt::format("\\[u{:04X}]", code);
    }
  }
  return out;
}

std::string man_page_file(const CommandEntry& command) {
  return command_name(command, '-') + ".1";
}

std::string render_man_page(const CommandEntry& root, const CommandEntry& command,
                            std::string_view version) {
  const std::string name = command_name(command, '-');
  std::string page = fmt::format(".TH {} 1 \"\" \"gb10tune {}\" \"User Commands\"\n",
                                 roff_escape(upper_case_name(name)), roff_escape(version));
  page += fmt::format(".SH NAME\n{} \\- {}\n", roff_escape(name),
                      roff_escape(name_line_text(command.description)));
  page += roff_synopsis(command);
  page += ".SH DESCRIPTION\n" + roff_paragraphs(command.description);
  page += roff_commands_section(command);
  page += roff_options_section(command);
  if (!command.footer.empty()) {
    page += ".SH NOTES\n" + roff_paragraphs(command.footer);
  }
  return page + roff_see_also(root, command);
}

}  // namespace gb10tune::manual
