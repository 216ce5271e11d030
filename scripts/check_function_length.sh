#!/usr/bin/env bash
# Checks that no function under src/ is longer than 120 lines (from the line of its opening brace
# to the line of its closing one): a longer function is split along its seams instead. A data
# table written as a function (one long initializer and nothing else) may stay long: the line
# before its signature, or the signature's own line, says so with the comment
#   // function-length: data table
#
# A function is found by matching braces, with comments and string, raw-string and character
# literals blanked: a `{` at namespace or class scope whose text since the previous `;`, `{` or
# `}` ends in a parameter list (`)`, then optional qualifiers such as const, noexcept, override,
# a trailing return type or a constructor's member initializers) opens a function; a lambda or a
# local class inside a function counts toward that function. Usage:
#   scripts/check_function_length.sh [ROOT [LIMIT]]   ROOT: the source tree (default: this
#                                                     script's project), LIMIT: 120
# Prints one line per offender (file:line: name, length) and exits 1 when there is one, 2 when
# ROOT holds no sources.
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
limit=${2:-120}
cd "$root"

exec python3 - "$limit" <<'PY'
import pathlib
import re
import sys

limit = int(sys.argv[1])
MARKER = "function-length: data table"
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"}


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (
                text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


QUALIFIERS = re.compile(
    r"\)\s*(?:const|noexcept(?:\([^()]*\))?|override|final|mutable|volatile|&&?|\s)*"
    r"(?:->[^{;]*)?\s*(?::[^{;]*)?$", re.S)
NOT_FUNCTION = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b|=\s*$|\]\s*$")
NAME = re.compile(r"([~\w:<>]+)\s*\(")


def functions(path):
    """(start line, end line, name, marked) of each function of the file."""
    raw = path.read_text(errors="replace")
    text = blank(raw)
    raw_lines = raw.split("\n")
    stack = []  # per open brace: True when it or an enclosing one is a function
    header_start = 0
    found = []
    line = 1
    open_function = None
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            inside = bool(stack) and stack[-1]
            header = text[header_start:i]
            is_function = False
            if not inside:
                stripped = header.strip()
                if (QUALIFIERS.search(stripped) and not NOT_FUNCTION.search(stripped.split("(")[0])
                        and not re.search(r"=\s*$", stripped)):
                    is_function = True
            stack.append(inside or is_function)
            if is_function:
                names = NAME.findall(header.split(")")[0] + ")")
                head_line = text.count("\n", 0, header_start + len(header) - len(header.lstrip())) + 1
                lines_before = raw_lines[max(head_line - 2, 0):line]
                marked = any(MARKER in l for l in lines_before)
                open_function = (line, names[-1] if names else "?", marked, len(stack))
            header_start = i + 1
        elif c == "}":
            if stack:
                stack.pop()
            if open_function and len(stack) == open_function[3] - 1:
                start, name, marked, _ = open_function
                found.append((start, line, name, marked))
                open_function = None
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
    return found


paths = sorted(p for p in pathlib.Path("src").rglob("*") if p.is_file() and (
    p.suffix in SUFFIXES or p.name.endswith(".cpp.in")))
if not paths:
    print("check_function_length: no C++ sources under src/; give the project's folder",
          file=sys.stderr)
    sys.exit(2)
offenders = 0
count = 0
for path in paths:
    for start, end, name, marked in functions(path):
        count += 1
        length = end - start + 1
        if length > limit and not marked:
            print(f"{path}:{start}: {name} is {length} lines (at most {limit}; split it along "
                  f"its seams)")
            offenders += 1
if offenders:
    print(f"check_function_length: {offenders} function(s) longer than {limit} lines (the rule: "
          "scripts/check_function_length.sh)", file=sys.stderr)
    sys.exit(1)
print(f"check_function_length: {count} functions of at most {limit} lines")
PY
