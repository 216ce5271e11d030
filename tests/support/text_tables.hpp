// A strict reader of Markdown pipe tables (GitHub's syntax) for the tests of rendered reports.
#pragma once

#include <string>
#include <vector>

namespace gb10tune::testing {

// What markdown_table_problems found.
struct MarkdownTables {
  std::size_t count = 0;              // tables seen
  std::vector<std::string> problems;  // one line per broken table row, naming the line
};

// Checks every table of `markdown` (outside ``` fences): a header row, then a delimiter row of
// `---` cells with as many cells, then rows each with as many cells (an escaped \| is text);
// every row starts and ends with a pipe.
MarkdownTables markdown_table_problems(const std::string& markdown);

}  // namespace gb10tune::testing
