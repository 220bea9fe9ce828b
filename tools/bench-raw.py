#!/usr/bin/python3
"""droce-perf --loopback against the raw DPDK limit (doc/performance.md).

    tools/bench-raw.py [--build DIR] [--reps N] [--scale X] [--only NAME,...] [--wait S]

Runs tests/bench/bench_raw (the minimal work of an RDMA WRITE in droce-perf's
thread shape) and droce-perf interleaved: in each repetition every figure's
raw run and droce runs follow each other, the raw one first in even
repetitions and last in odd ones, so the machine's other load falls on both.
Prints a table of medians with min..max, the ratio droce/raw of the medians
and the issue's goal for each figure, writes DIR/bench-raw.json and draws
DIR/bench-raw.png (matplotlib, Agg backend).

Refuses to measure (exit 1) while a droced or droce-pmd process runs: an
engine polling a CPU would take it from both programs. It looks before every
run; --wait S (default 0) waits up to S seconds for such processes to end
before it refuses (a machine where tests start droced now and then). Other load is
reported (the load average before and after) but not refused: the ratios are
what the goals are about, the absolute figures move with the load.

--reps (default 3) repetitions; --scale multiplies every run's message count
(default 1: each run takes about a second, the whole script about a minute
on an idle 2-CPU machine).
A run that fails is run once more (a heavily loaded machine can stall one).
Exit status: 0 when every run ran, 1 when a run failed twice or a droce
daemon runs, 2 on a usage error.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROG = "bench-raw"

# The figures of the issue: name, what, unit, raw run, droce runs, how the ratio reads, goal.
# A run is (program, args, metric); the ratio is droce/raw, or droce/droce for the QP figure.
BW = "msg_rate"


def bw(size, iters):
    return ("raw", ["bw", "-s", str(size), "-n", str(iters)], BW)


def perf(test, size, iters, *more, metric=BW):
    return ("perf", [test, "--loopback", "-s", str(size), "-n", str(iters), *more], metric)


FIGURES = [
    # name, label, unit, numerator run, denominator run, higher_is_better, goal
    ("write_64", "64 B WRITE, 1 QP", "Mpps", perf("write_bw", 64, 3000000), bw(64, 3000000),
     True, 0.60),
    ("send_64", "64 B SEND", "Mpps", perf("send_bw", 64, 3000000), bw(64, 3000000), True, 0.50),
    ("read_64", "64 B READ", "Mpps", perf("read_bw", 64, 3000000), bw(64, 3000000), True, 0.40),
    ("write_1k", "1 KiB WRITE", "Mpps", perf("write_bw", 1024, 1500000), bw(1024, 1500000), True,
     0.85),
    ("write_4k", "4 KiB WRITE", "Mpps", perf("write_bw", 4096, 600000), bw(4096, 600000), True,
     0.85),
    ("write_64k", "64 KiB WRITE", "Gbit/s", perf("write_bw", 65536, 60000, metric="gbits"),
     ("raw", ["bw", "-s", "65536", "-n", "60000"], "gbits"), True, 0.90),
    ("write_lat_median", "64 B WRITE half round trip, median", "us",
     perf("write_lat", 64, 300000, metric="t_typical"),
     ("raw", ["lat", "-s", "64", "-n", "300000"], "t_typical"), False, 1.15),
    ("send_lat_median", "64 B SEND half round trip, median", "us",
     perf("send_lat", 64, 300000, metric="t_typical"),
     ("raw", ["lat", "-s", "64", "-n", "300000"], "t_typical"), False, 1.25),
    ("write_lat_p999", "64 B WRITE half round trip, p99.9", "us",
     perf("write_lat", 64, 300000, metric="p99_9"),
     ("raw", ["lat", "-s", "64", "-n", "300000"], "p99_9"), False, 1.30),
    ("write_64_256qp", "64 B WRITE, 256 QPs vs 1 QP", "Mpps",
     perf("write_bw", 64, 12000, "-q", "256"), perf("write_bw", 64, 3000000), True, 0.70),
]


class RunFailed(Exception):
    pass


class EngineRuns(Exception):
    pass


def engines_running():
    """(pid, name) of every droced or droce-pmd process: each polls a CPU."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in ("droced", "droce-pmd"):
            found.append((int(pid), comm))
    return found


def wait_engines(wait_s):
    """Return once no droced or droce-pmd runs; EngineRuns after @wait_s seconds of them."""
    deadline = time.monotonic() + wait_s
    warned = False
    while True:
        busy = engines_running()
        if not busy:
            return
        what = ", ".join(f"{name} (pid {pid})" for pid, name in busy)
        if time.monotonic() >= deadline:
            raise EngineRuns(f"{what} runs and polls a CPU: stop it first")
        if not warned:
            print(f"{PROG}: {what} runs and polls a CPU: waiting up to {wait_s:.0f} s",
                  file=sys.stderr)
            warned = True
        time.sleep(0.5)


def run_key(run):
    prog, args, _ = run
    return (prog, tuple(args))


def scaled(run, scale):
    """The run with its message count (-n) multiplied by @scale."""
    prog, args, metric = run
    args = list(args)
    i = args.index("-n")
    args[i + 1] = str(max(5, int(int(args[i + 1]) * scale)))
    return (prog, args, metric)


def execute(build, run, tmp):
    """The result row of one run (a dict of droce-perf's or bench_raw's JSON)."""
    prog, args, _ = run
    out = os.path.join(tmp, "out.json")
    if os.path.exists(out):
        os.unlink(out)
    if prog == "raw":
        cmd = [os.path.join(build, "tests/bench/bench_raw"), *args, "-j", out]
    else:
        cmd = [os.path.join(build, "app/droce-perf/droce-perf"), *args, "-F",
               "--out_json_file=" + out]
    env = dict(os.environ)
    env.pop("DROCE_DAEMON", None)  # the embedded engine, as the baseline's own lcore
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       timeout=120, check=False, text=True)
    if p.returncode != 0:
        raise RunFailed(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    try:
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        row = doc["results"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise RunFailed(f"{' '.join(cmd)}: no result ({e})") from None
    row = dict(row)
    if "bw_gbits" in row:
        row["gbits"] = row["bw_gbits"]
    elif "msg_rate" in row:
        row["gbits"] = row["msg_rate"] * row["bytes"] * 8 / 1e3
    return row


def measure(build, reps, scale, figures, wait_s):
    """{run key: [result row per repetition]}; each run once per repetition, interleaved."""
    rows = {}
    tmp = tempfile.mkdtemp(prefix="droce-bench-raw.")
    try:
        for rep in range(reps):
            done = set()
            for fig in figures:
                pair = [scaled(fig[4], scale), scaled(fig[3], scale)]
                if rep % 2 == 1:
                    pair.reverse()
                for run in pair:
                    key = run_key(run)
                    if key in done:
                        continue  # one run serves every figure that uses it
                    done.add(key)
                    wait_engines(wait_s)
                    t0 = time.monotonic()
                    try:
                        row = execute(build, run, tmp)
                    except RunFailed as e:
                        # a run stalled by other load fails as one whose program is broken:
                        # once more, and the second failure is final
                        print(f"{PROG}: {e}\n{PROG}: once more", file=sys.stderr)
                        wait_engines(wait_s)
                        row = execute(build, run, tmp)
                    rows.setdefault(key, []).append(row)
                    print(f"  rep {rep + 1}/{reps} {run[0]:4} {' '.join(run[1]):45} "
                          f"{time.monotonic() - t0:5.1f} s", file=sys.stderr, flush=True)
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)
    return rows


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "values": values}


def figures_table(rows, scale, figures):
    table = []
    for name, label, unit, num, den, higher, goal in figures:
        n = [r[num[2]] for r in rows[run_key(scaled(num, scale))]]
        d = [r[den[2]] for r in rows[run_key(scaled(den, scale))]]
        sn, sd = summary(n), summary(d)
        ratio = sn["median"] / sd["median"] if sd["median"] > 0 else float("nan")
        met = ratio >= goal if higher else ratio <= goal
        table.append({"name": name, "figure": label, "unit": unit,
                      "droce": sn, "baseline": sd,
                      "baseline_is": "droce-perf, 1 QP" if den[0] == "perf" else "bench_raw",
                      "ratio": ratio, "goal": goal, "higher_is_better": higher, "met": met})
    return table


def fmt(s):
    return f"{s['median']:.2f} ({s['min']:.2f}..{s['max']:.2f})"


def print_table(table, reps, load):
    print(f"droce-perf --loopback vs bench_raw: medians of {reps} runs (min..max); "
          f"load average {load[0]:.2f} before, {load[1]:.2f} after")
    print()
    print("| figure | unit | droce | raw limit | droce/raw | goal | met |")
    print("|---|---|---:|---:|---:|---|---|")
    for t in table:
        goal = ("≥ " if t["higher_is_better"] else "≤ ") + f"{t['goal']:.2f}"
        base = fmt(t["baseline"]) + (" (1 QP)" if t["baseline_is"] != "bench_raw" else "")
        print(f"| {t['figure']} | {t['unit']} | {fmt(t['droce'])} | {base} | "
              f"{t['ratio']:.2f} | {goal} | {'yes' if t['met'] else 'no'} |")


def plot(table, path):
    """Ratios against goals, one bar per figure; False (and why on stderr) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{PROG}: no plot: matplotlib missing (python3-matplotlib)", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(9, 5))
    names = [t["figure"] for t in table]
    ratios = [t["ratio"] for t in table]
    lo = [t["ratio"] * t["droce"]["min"] / t["droce"]["median"] for t in table]
    hi = [t["ratio"] * t["droce"]["max"] / t["droce"]["median"] for t in table]
    y = list(range(len(table)))
    colors = ["tab:green" if t["met"] else "tab:red" for t in table]
    ax.barh(y, ratios, color=colors, alpha=0.7,
            xerr=[[r - a for r, a in zip(ratios, lo)], [b - r for r, b in zip(ratios, hi)]])
    for i, t in enumerate(table):
        ax.plot([t["goal"], t["goal"]], [i - 0.4, i + 0.4], color="black", linewidth=2)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("droce / raw DPDK (rates: higher is better; latencies: lower is better); "
                  "black: goal", fontsize=8)
    ax.set_title("droce-perf --loopback against the raw DPDK limit")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--reps", type=int, default=3, help="repetitions (at least 3)")
    ap.add_argument("--scale", type=float, default=1.0, help="message counts times this")
    ap.add_argument("--only", default=None, help="figure names, comma-separated")
    ap.add_argument("--wait", type=float, default=0.0,
                    help="seconds to wait for a droced or droce-pmd to end before refusing")
    o = ap.parse_args()
    if o.reps < 3 or o.scale <= 0:
        ap.error("--reps takes 3 or more, --scale a positive number")
    figures = FIGURES
    if o.only:
        want = o.only.split(",")
        figures = [f for f in FIGURES if f[0] in want]
        if len(figures) != len(want):
            ap.error(f"--only: figures are {', '.join(f[0] for f in FIGURES)}")
    build = os.path.abspath(o.build)
    for b in ("tests/bench/bench_raw", "app/droce-perf/droce-perf"):
        if not os.access(os.path.join(build, b), os.X_OK):
            print(f"{PROG}: no {os.path.join(build, b)} (build first: ninja -C {build})",
                  file=sys.stderr)
            return 1
    load0 = os.getloadavg()[0]
    try:
        rows = measure(build, o.reps, o.scale, figures, o.wait)
    except (RunFailed, EngineRuns, subprocess.TimeoutExpired) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    load = (load0, os.getloadavg()[0])
    table = figures_table(rows, o.scale, figures)
    print_table(table, o.reps, load)
    out = {"reps": o.reps, "scale": o.scale, "cpus": os.cpu_count(),
           "load_average": {"before": load[0], "after": load[1]},
           "noisy": max(load) > (os.cpu_count() or 1),
           "figures": table}
    path = os.path.join(build, "bench-raw.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2)
    print(f"\nJSON: {path}")
    png = os.path.join(build, "bench-raw.png")
    if plot(table, png):
        print(f"plot: {png}")
    if out["noisy"]:
        print(f"note: the load average exceeded the {os.cpu_count()} CPUs: other work shared "
              "them; compare the ratios, not the absolute figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
