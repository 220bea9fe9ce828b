#!/usr/bin/python3
"""Totals of a meson test run: each Criterion executable's synthesis line, and
one closing line counting every test case (a test without Criterion counts as one)."""
import json
import re
import sys

SYNTH = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")

passed = failed = 0
with open(sys.argv[1]) as log:
    for line in log:
        t = json.loads(line)
        m = None
        for m in SYNTH.finditer(t.get("stdout", "") + (t.get("stderr") or "")):
            pass
        ok = t["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
        name = t["name"].split(" / ")[-1]
        if m:
            p, f = int(m[2]), int(m[3]) + int(m[4])
            if not ok and f == 0:
                f = 1  # the executable failed outside its test cases
            print(f"  {name:<24} {m[0]}")
        else:
            p, f = (1, 0) if ok else (0, 1)
            print(f"  {name:<24} {t['result']}")
        passed += p
        failed += f
print(f"tests: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
