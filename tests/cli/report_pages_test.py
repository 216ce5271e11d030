#!/usr/bin/env python3
"""Renders `gb10tune report` from the captured state directories and checks the pages' structure.

    report_pages_test.py GB10TUNE FIXTURES_DIR

HTML: parsed with html.parser; every inline <svg> parsed again with xml.etree. Each chart has
a viewBox, an x axis with ticks, a category axis and its data points, and every point's figures
equal the saved JSON's. Parts the state lacks are boxes naming their command, never a chart.
Markdown: every pipe table is well formed (a strict checker: header, delimiter row, the same
number of cells in every row), and cmark-gfm (GitHub's CommonMark with its table extension;
scripts/setup.sh installs it) renders each one as a table of those rows and cells. Exits 1
naming each failure.
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


class PageReader(html.parser.HTMLParser):
    """Collects each <svg>…</svg> as text, the missing boxes and the tags used."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.svgs = []
        self.missing = []
        self.tags = set()
        self.lines = text.split("\n")

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "missing":
            self.missing.append(attrs.get("data-part"))


def svg_texts(text):
    out, at = [], 0
    while True:
        start = text.find("<svg", at)
        if start < 0:
            return out
        end = text.index("</svg>", start) + len("</svg>")
        out.append(text[start:end])
        at = end


def charts(text):
    result = {}
    for svg in svg_texts(text):
        root = ET.fromstring(svg)
        result[root.get("data-chart")] = root
    return result


def points(root):
    return [e for e in root.iter() if "point" in (e.get("class") or "").split()]


def check_chart_structure(name, root):
    check(root.get("viewBox", "").startswith("0 0 "), f"{name}: no viewBox")
    axes = {g.get("data-axis"): g for g in root.iter(SVG + "g") if g.get("class") == "axis"}
    check("x" in axes and "y" in axes, f"{name}: axes {sorted(axes)}")
    if "x" in axes:
        ticks = [t for t in axes["x"].iter(SVG + "text") if t.get("class") == "tick"]
        check(len(ticks) >= 2, f"{name}: {len(ticks)} ticks on the x axis")
        check(float(ticks[0].get("data-value")) == 0, f"{name}: the x axis does not start at 0")
        check(axes["x"].get("data-unit"), f"{name}: the x axis has no unit")
    check(len(points(root)) >= 1, f"{name}: no data point")


def render(binary, state, fmt, workdir):
    out = os.path.join(workdir, f"{os.path.basename(state)}.{fmt}")
    done = subprocess.run([*binary, "report", "--state", state, "--format", fmt, "-o", out],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    check(done.returncode == 0, f"report {state} {fmt}: exit {done.returncode}: {done.stderr}")
    with open(out, encoding="utf-8") as f:
        return f.read()


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_h200(text, fixtures):
    bench = load(os.path.join(fixtures, "h200", "bench.json"))
    found = charts(text)
    check(set(found) == {"bandwidth"}, f"h200: charts {sorted(found)}")
    chart = found["bandwidth"]
    check_chart_structure("h200 bandwidth", chart)
    measured = [c for c in bench["cases"] if c["status"] == "ok"]
    bars = points(chart)
    check(len(bars) == len(measured), f"h200: {len(bars)} bars for {len(measured)} cases")
    for bar, case in zip(bars, measured):
        label = f"{case['allocator']} {case['operation']}"
        check(bar.get("data-label") == label, f"h200: bar {bar.get('data-label')} for {label}")
        for attr, key in (("data-value", "median"), ("data-low", "min"), ("data-high", "max")):
            check(float(bar.get(attr)) == case["gbps"][key], f"h200 {label}: {attr} {bar.get(attr)}")
    reference = [g for g in chart.iter(SVG + "g") if g.get("class") == "reference"]
    check(len(reference) == 1 and
          float(reference[0].get("data-value")) == bench["peak_bytes_per_second"] / 1e9,
          "h200: the nominal peak line")
    for case in (c for c in bench["cases"] if c["status"] != "ok"):
        row = f"<td>{case['allocator']} {case['operation']}</td>"
        check(row in text and f"{case['status']}: " in text, f"h200: {row} not listed as waived")


def check_cpu(text, fixtures):
    base = os.path.join(fixtures, "cpu-server")
    found = charts(text)
    check(set(found) == {"memory", "memory-parts", "decode", "prefill", "tune"},
          f"cpu: charts {sorted(found)}")
    for name, root in found.items():
        check_chart_structure("cpu " + name, root)
    plan = load(os.path.join(base, "launch.json"))["plan"]["plan"]
    segments = [p for p in points(found["memory"]) if "seg" in p.get("class").split()]
    check(sum(int(s.get("data-bytes")) for s in segments) == plan["total_bytes"],
          "cpu: the plan's segments do not add up to total_bytes")
    parts = points(found["memory-parts"])
    check([p.get("data-label") for p in parts] == [s.get("data-label") for s in segments],
          "cpu: the plan's parts differ from its segments")
    unit = [g for g in found["memory-parts"].iter(SVG + "g") if g.get("data-axis") == "x"]
    scale = {"MiB": 2**20, "GiB": 2**30}[unit[0].get("data-unit")]
    for part, segment in zip(parts, segments):
        check(abs(float(part.get("data-value")) * scale - int(segment.get("data-bytes"))) < 1,
              f"cpu: part {part.get('data-label')} is not its segment's bytes")
    budget = [g for g in found["memory"].iter(SVG + "g") if g.get("class") == "reference"]
    check(budget and int(budget[0].get("data-bytes")) == plan["available_bytes"], "cpu: budget")
    runs = sorted(os.listdir(os.path.join(base, "bench")))
    for chart, metric in (("decode", "decode_tps"), ("prefill", "prefill_tps")):
        bars = points(found[chart])
        check(len(bars) == len(runs), f"cpu {chart}: {len(bars)} bars for {len(runs)} runs")
        for bar, run in zip(bars, runs):
            saved = load(os.path.join(base, "bench", run))["levels"][0]["metrics"][metric]
            check(bar.get("data-label") == run[:-5], f"cpu {chart}: {bar.get('data-label')}")
            check(float(bar.get("data-value")) == saved["median"], f"cpu {chart} {run}: median")
            check(float(bar.get("data-low")) == saved["median_interval"]["low"], f"{run}: low")
            check(float(bar.get("data-high")) == saved["median_interval"]["high"], f"{run}: high")
    medians = set()
    with open(os.path.join(base, "tune-journal.jsonl"), encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            measured = entry.get("measured") or entry.get("measurement")
            if measured and measured.get("count"):
                medians.add(measured["median"])
    for bar in points(found["tune"]):
        check(float(bar.get("data-value")) in medians, f"cpu tune: {bar.get('data-label')}")


def check_page(name, text, expected_missing):
    page = PageReader(text)
    page.feed(text)
    check("script" not in page.tags and "link" not in page.tags, f"{name}: script or link")
    check(" src=" not in text and "href=" not in text, f"{name}: an external reference")
    check(sorted(page.missing) == sorted(expected_missing),
          f"{name}: missing boxes {sorted(page.missing)}, expected {sorted(expected_missing)}")


def table_cells(line):
    cells, cell, i = [], "", 1
    while i < len(line):
        if line[i] == "\\" and line[i + 1:i + 2] == "|":
            cell += "\\|"
            i += 2
            continue
        if line[i] == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += line[i]
        i += 1
    return cells


class TableReader(html.parser.HTMLParser):
    """The cell count of every row of every <table> in cmark-gfm's HTML."""

    def __init__(self):
        super().__init__()
        self.tables = []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append(0)
        elif tag in ("td", "th"):
            self.tables[-1][-1] += 1


def check_rendered_markdown(name, text, tables):
    """`tables`: (rows, cells) of each table the strict checker read, in order."""
    cmark = shutil.which("cmark-gfm")
    check(cmark, "cmark-gfm is not installed (scripts/setup.sh installs it)")
    if not cmark:
        return
    done = subprocess.run([cmark, "-e", "table"], input=text, capture_output=True, text=True)
    reader = TableReader()
    reader.feed(done.stdout)
    rendered = [(len(rows), set(rows)) for rows in reader.tables]
    check(rendered == [(rows, {cells}) for rows, cells in tables],
          f"{name} md: cmark-gfm renders {rendered}, the tables are {tables}")


def check_markdown(name, text):
    fenced, table, count, shapes = False, [], 0, []
    for number, line in enumerate(text.split("\n") + [""], 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and line.startswith("|"):
            table.append((number, line))
            continue
        if table:
            count += 1
            width = len(table_cells(table[0][1]))
            check(len(table) >= 2 and all(set(c) <= set("-:") and c
                                          for c in table_cells(table[1][1])),
                  f"{name} md line {table[0][0]}: no delimiter row")
            for n, row in table:
                check(row.endswith("|") and not row.endswith("\\|"), f"{name} md line {n}: end")
                check(len(table_cells(row)) == width, f"{name} md line {n}: cell count")
            shapes.append((len(table) - 1, width))  # the delimiter row is no row of the table
            table = []
    check(not fenced, f"{name} md: an unclosed code fence")
    check(count >= 1, f"{name} md: no table")
    check_rendered_markdown(name, text, shapes)


def main():
    # The tool, behind the emulator that runs it in a cross build (empty natively).
    binary = os.environ.get("GB10TUNE_TEST_EMULATOR", "").split() + [sys.argv[1]]
    fixtures = sys.argv[2]
    with tempfile.TemporaryDirectory() as workdir:
        h200 = render(binary, os.path.join(fixtures, "h200"), "html", workdir)
        check_page("h200", h200, ["memory", "verify", "runs", "roofline", "tune"])
        check_h200(h200, fixtures)
        cpu = render(binary, os.path.join(fixtures, "cpu-server"), "html", workdir)
        check_page("cpu", cpu, ["bandwidth", "roofline"])
        check_cpu(cpu, fixtures)
        for state in ("h200", "cpu-server"):
            check_markdown(state, render(binary, os.path.join(fixtures, state), "md", workdir))
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
