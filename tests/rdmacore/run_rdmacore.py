#!/usr/bin/python3
"""rdma-core's own test suite on droce: the `rdmacore` suite.

    run_rdmacore.py --build BUILD_DIR --mode embedded|droced [--tests DIR] [--budget SECS]

Runs the Python tests every libibverbs provider answers to, Debian's copy
(python3-pyverbs; the rdma-core package puts them under DIR, some gzipped),
with Debian's /usr/bin/python3 against droce's drop-in libibverbs.so.1: two
devices joined back to back, in the test process's embedded engine, or in a
droced the script starts. The copy is unpacked into BUILD_DIR/rdmacore-tests.

Prints one TAP-style line per test that ran (`ok N` / `not ok N`), a `#` line
per skip and per expected departure, then the counts. Fails (exit 1) on a
failure or error that expectations.txt does not list as a departure, on a
listed departure that passed (take it off the list), on a skip whose reason no
`skip` line of expectations.txt names, and when the run does not end within
the budget. Exit 77 (skip) when this machine has no pyverbs or no test copy.
"""

import argparse
import ctypes
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
DEBIAN_TESTS = "/usr/share/doc/rdma-core/tests"
# Two devices joined back to back; IPv4 and IPv6 GIDs as Linux gives a RoCE netdev.
DEV0 = "droce0:mac=02:00:00:00:0c:01,ip=10.12.0.1,ip=fd00:12::1,link=rc"
DEV1 = "droce1:mac=02:00:00:00:0c:02,ip=10.12.0.2,ip=fd00:12::2,link=rc"
# unittest -v: "name (module.Class.name) ... verdict", the docstring's first
# line in place of the name when the test has one; a verdict may follow
# the test's own output on a later line.
RESULT = re.compile(r"^(?P<name>.*?) \((?P<id>tests\.[\w.]+)\)(?: \.\.\. |\n)", re.M)
VERDICT = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|skipped '(.*)'|skipped \"(.*)\"|"
                     r"expected failure|unexpected success)$", re.M)


def die_with_parent():
    """In a child: SIGKILL when this script ends, however it ends (a droced or an engine
    left behind would poll a CPU)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def say(*words):
    print(*words, flush=True)


def skip(reason):
    say(f"1..0 # SKIP {reason}")
    sys.exit(SKIP)


def read_expectations(path):
    """`departure TEST_ID REASON` and `skip PATTERN | FEATURE` lines (PATTERN, a regular
    expression, is searched in "TEST_ID: SKIP REASON"); # starts a comment line."""
    departures, skips = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            kind, _, rest = line.partition(" ")
            if kind == "departure":
                test_id, _, reason = rest.strip().partition(" ")
                departures[test_id] = reason.strip()
            elif kind == "skip":
                pattern, _, feature = rest.rpartition(" | ")
                skips.append((re.compile(pattern.strip()), feature.strip()))
            else:
                raise SystemExit(f"{path}:{n}: unknown line kind {kind!r}")
    return departures, skips


def unpack(src, dst):
    """A copy of Debian's tests with the gzipped files unpacked (once per build)."""
    stamp = os.path.join(dst, ".unpacked")
    if os.path.exists(stamp):
        return
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    for name in os.listdir(dst):
        if name.endswith(".gz"):
            path = os.path.join(dst, name)
            with gzip.open(path, "rb") as z, open(path[:-3], "wb") as out:
                shutil.copyfileobj(z, out)
            os.unlink(path)
    open(stamp, "w").close()


def start_droced(build, work):
    sock = os.path.join(work, "droced.sock")
    log = open(os.path.join(work, "droced.log"), "w")
    env = dict(os.environ, DROCE_NO_HUGE="1")
    proc = subprocess.Popen([os.path.join(build, "app", "droced", "droced"), "-s", sock,
                             "-d", DEV0, "-d", DEV1], stderr=log, env=env,
                             preexec_fn=die_with_parent)
    for _ in range(300):
        if os.path.exists(sock) or proc.poll() is not None:
            break
        time.sleep(0.1)
    if not os.path.exists(sock):
        proc.kill()
        proc.wait()
        say(open(log.name).read())
        raise SystemExit("droced did not start")
    return proc, sock, log.name


def stop_droced(proc, log):
    proc.send_signal(signal.SIGTERM)
    try:
        status = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        status = None
    if status != 0:
        say(open(log).read())
        say(f"droced ended with status {status} on SIGTERM")
        return False
    return True


def parse(out):
    """[(test id, shown name, verdict, skip reason)] in the order unittest ran them."""
    results = []
    # the verdicts end where unittest's reports of failures and errors begin
    cut = min(i for i in (out.find("\n" + "=" * 70), out.find("\n" + "-" * 70), len(out))
              if i >= 0)
    body = out[:cut]
    starts = list(RESULT.finditer(body))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        v = VERDICT.search(body, m.start(), end)
        if not v:
            results.append((m["id"], m["name"], "ERROR", None))
            continue
        word = v[1]
        if word.startswith("skipped"):
            results.append((m["id"], m["name"], "skipped", v[2] if v[2] is not None else v[3]))
        else:
            results.append((m["id"], m["name"], word, None))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--mode", choices=("embedded", "droced"), required=True)
    ap.add_argument("--tests", default=DEBIAN_TESTS)
    ap.add_argument("--budget", type=int, default=120, help="seconds for the whole run")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    # meson's timeout sends SIGTERM: end through the cleanup below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("ended by SIGTERM"))

    if not os.path.exists(os.path.join(args.tests, "run_tests.py")):
        skip(f"no rdma-core test suite in {args.tests} (Debian's python3-pyverbs)")
    if subprocess.run([PYTHON, "-c", "import pyverbs.device"], capture_output=True).returncode:
        skip("pyverbs does not import (Debian's python3-pyverbs)")
    departures, skip_reasons = read_expectations(os.path.join(HERE, "expectations.txt"))
    copy = os.path.join(build, "rdmacore-tests", "tests")
    unpack(args.tests, copy)

    work = tempfile.mkdtemp(prefix="droce-rdmacore-")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib", "dropin"))
    env.pop("DROCE_DAEMON", None)
    droced = None
    if args.mode == "droced":
        droced, sock, droced_log = start_droced(build, work)
        env.update(DROCE_DAEMON=sock, DROCE_SHARE_PRIVATE="1")
        env.pop("DROCE_DEVICES", None)
    else:
        env["DROCE_DEVICES"] = f"{DEV0} {DEV1}"
    ok_run = True
    try:
        run = subprocess.run([PYTHON, "run_tests.py", "-v"], cwd=copy, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=args.budget, preexec_fn=die_with_parent)
        out = run.stdout
    except subprocess.TimeoutExpired as ex:
        out = ex.stdout.decode() if isinstance(ex.stdout, bytes) else (ex.stdout or "")
        say(out)
        say(f"not ok 1 rdma-core's tests did not end within {args.budget} s")
        ok_run = False
    finally:
        if droced and not stop_droced(droced, droced_log):
            ok_run = False
        shutil.rmtree(work, ignore_errors=True)
    if not ok_run:
        return 1

    results = parse(out)
    ran = re.search(r"^Ran (\d+) tests? in", out, re.M)
    if not ran or int(ran[1]) != len(results):
        say(out)
        say(f"not ok 1 {len(results)} results read, unittest says {ran[1] if ran else 'nothing'}")
        return 1

    counts = dict(passed=0, failed=0, errors=0, skipped=0, departures=0)
    bad = []
    n = 0
    for test_id, name, verdict, reason in results:
        if verdict == "skipped":
            counts["skipped"] += 1
            feature = next((f for p, f in skip_reasons if p.search(f"{test_id}: {reason}")),
                           None)
            if feature is None:
                bad.append(f"{test_id}: skipped for a reason expectations.txt does not name: "
                           f"{reason}")
                say(f"# SKIP {test_id}: {reason} (UNLISTED)")
            else:
                say(f"# SKIP {test_id}: {reason} ({feature})")
            continue
        passed = verdict in ("ok", "expected failure")
        if test_id in departures:
            if passed:
                n += 1
                say(f"not ok {n} {test_id} passed: take it off expectations.txt's departures")
                bad.append(f"{test_id}: listed as a departure, passed")
                counts["passed"] += 1
            else:
                counts["departures"] += 1
                say(f"# DEPARTURE {test_id} {verdict}: {departures[test_id]}")
            continue
        n += 1
        if passed:
            counts["passed"] += 1
            say(f"ok {n} {test_id}")
        else:
            counts["errors" if verdict == "ERROR" else "failed"] += 1
            say(f"not ok {n} {test_id} {verdict}")
            bad.append(f"{test_id}: {verdict}")
    if bad:
        # unittest's tracebacks of the failures and errors
        tail = out.find("\n======")
        say(out[tail:] if tail >= 0 else out)
    say(f"rdmacore {args.mode}: {len(results)} tests: {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['skipped']} skipped, {counts['errors']} errors, "
        f"{counts['departures']} expected departures")
    for b in bad:
        say(f"  {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
