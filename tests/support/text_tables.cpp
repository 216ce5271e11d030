#include "support/text_tables.hpp"

#include <fmt/format.h>

#include <sstream>

namespace gb10tune::testing {

namespace {

// The cells of one table row (the text between unescaped pipes), trimmed.
std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      const auto first = cell.find_first_not_of(' ');
      cells.push_back(first == std::string::npos
                          ? ""
                          : cell.substr(first, cell.find_last_not_of(' ') - first + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

}  // namespace

MarkdownTables markdown_table_problems(const std::string& markdown) {
  MarkdownTables out;
  std::istringstream in(markdown);
  std::string line;
  bool fenced = false;
  std::size_t columns = 0;  // of the table being read; 0 outside a table
  int row = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced || line.empty() || line[0] != '|') {
      columns = 0;
      row = 0;
      continue;
    }
    const auto problem = [&](const std::string& what) {
      out.problems.push_back(fmt::format("line {}: {}: {}", number, what, line));
    };
    if (line.back() != '|' || (line.size() > 1 && line[line.size() - 2] == '\\')) {
      problem("does not end with a pipe");
    }
    const auto cells = table_cells(line);
    if (row == 0) {
      columns = cells.size();
      ++out.count;
    } else if (cells.size() != columns) {
      problem(fmt::format("{} cells where the header has {}", cells.size(), columns));
    }
    for (const std::string& cell : cells) {
      if (row == 1 && cell.find_first_not_of("-:") != std::string::npos) {
        problem("the second row is not a delimiter row");
      }
    }
    ++row;
  }
  return out;
}

}  // namespace gb10tune::testing
