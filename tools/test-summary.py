#!/usr/bin/python3
"""Totals of a meson test run: each Criterion executable's synthesis line, each
TAP-style test's cells (`ok N` / `not ok N` lines, as the interop suite prints),
and one closing line counting every test case (any other test counts as one).
A skipped test is counted apart and says why, so that a skip is never a pass."""
import json
import re
import sys

SYNTH = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
TAP = re.compile(r"^(ok|not ok) \d+ ", re.M)
TAP_SKIP = re.compile(r"^1\.\.0 # SKIP (.*)$", re.M)

passed = failed = skipped = 0
with open(sys.argv[1]) as log:
    for line in log:
        t = json.loads(line)
        out = t.get("stdout", "") + (t.get("stderr") or "")
        m = None
        for m in SYNTH.finditer(out):
            pass
        cells = TAP.findall(out)
        ok = t["result"] in ("OK", "EXPECTEDFAIL")
        name = t["name"].split(" / ")[-1]
        if t["result"] == "SKIP":
            why = TAP_SKIP.search(out)
            print(f"  {name:<24} SKIP" + (f": {why[1]}" if why else ""))
            skipped += 1
            continue
        if m:
            p, f = int(m[2]), int(m[3]) + int(m[4])
            if not ok and f == 0:
                f = 1  # the executable failed outside its test cases
            print(f"  {name:<24} {m[0]}")
        elif cells:
            p = cells.count("ok")
            f = len(cells) - p
            if not ok and f == 0:
                f = 1  # the program failed outside its cells
            print(f"  {name:<24} cells: {p} passed, {f} failed")
        else:
            p, f = (1, 0) if ok else (0, 1)
            print(f"  {name:<24} {t['result']}")
        passed += p
        failed += f
print(f"tests: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
