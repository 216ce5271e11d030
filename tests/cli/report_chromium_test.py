#!/usr/bin/env python3
"""Loads `gb10tune report`'s HTML page of the captured states in headless Chromium and fails on
any console message of level warning or above, or when the page does not render.

    report_chromium_test.py GB10TUNE FIXTURES_DIR

Needs Debian's `chromium` (or `chromium-browser`/`google-chrome`) on PATH. Without it the test
exits 77, which CTest reports as skipped, unless GB10TUNE_REQUIRE_CHROMIUM=1 (set by
`GB10TUNE_CHROMIUM=1 scripts/test.sh`, which installs it), when a missing browser fails.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def main():
    # The tool, behind the emulator that runs it in a cross build (empty natively).
    binary = os.environ.get("GB10TUNE_TEST_EMULATOR", "").split() + [sys.argv[1]]
    fixtures = sys.argv[2]
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        print("chromium is not installed: GB10TUNE_CHROMIUM=1 scripts/test.sh installs it")
        return 1 if os.environ.get("GB10TUNE_REQUIRE_CHROMIUM") == "1" else 77
    failures = []
    with tempfile.TemporaryDirectory() as workdir:
        for state in ("h200", "cpu-server"):
            page = os.path.join(workdir, state + ".html")
            subprocess.run([*binary, "report", "--state", os.path.join(fixtures, state), "-o", page],
                           check=True, capture_output=True)
            done = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={os.path.join(workdir, 'profile-' + state)}",
                 "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page],
                capture_output=True, text=True, timeout=120)
            console = [line for line in done.stderr.splitlines()
                       if re.search(r"CONSOLE|Uncaught|Refused to|Failed to load", line)]
            if done.returncode != 0:
                failures.append(f"{state}: chromium exited {done.returncode}: {done.stderr[-2000:]}")
            if console:
                failures.append(f"{state}: console messages: {console}")
            if 'data-chart="' not in done.stdout or "</main>" not in done.stdout:
                failures.append(f"{state}: the rendered DOM lacks the charts or the page's end")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s) ({browser})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
