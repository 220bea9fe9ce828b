#!/usr/bin/python3
"""One PNG of droce-perf's results against message size.

    plot-perf.py BW_JSON LAT_JSON OUT_PNG

BW_JSON is the --out_json of a bandwidth run (write_bw -a, say), LAT_JSON that
of a latency run (write_lat -a); each holds one `results` row per message size
(doc/tools.md). The PNG has two panels sharing a log2 axis of message size:
average and peak bandwidth in Gb/s (MB/sec results are converted; no peak
after -N), and the typical and 99th-percentile latency in microseconds (log
scale). Drawn with matplotlib's Agg backend: no display needed.

Exit status 0 when the PNG is written (its path is printed), 1 on bad input (a
missing or unreadable file, not JSON, not the run it should be, no or bad
rows), when the PNG cannot be written or matplotlib is missing, 2 on a usage
error. Every failure says why on stderr, and no PNG is left behind.
"""
import json
import math
import os
import sys

PROG = "plot-perf"
MB = 1 << 20  # droce-perf's MB/sec is 2^20 bytes a second, its Gb/sec 10^9 bits


class BadInput(Exception):
    pass


def number(row, key, where):
    v = row.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BadInput(f"{where}: '{key}' is {json.dumps(v)}, not a number")
    if v < 0:
        raise BadInput(f"{where}: '{key}' is negative ({v})")
    return float(v)


def load(path, kind):
    """The rows of a droce-perf JSON of @kind ('bw' or 'lat'), sorted by size."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: not a droce-perf --out_json object")
    if kind == "bw" and "bw_unit" not in doc:
        raise BadInput(f"{path}: not a bandwidth run (no 'bw_unit'; "
                       "the first file is a *_bw --out_json)")
    if kind == "lat" and doc.get("time_unit") != "usec":
        raise BadInput(f"{path}: not a latency run ('time_unit' is not \"usec\"; "
                       "the second file is a *_lat --out_json)")
    unit = doc.get("bw_unit")
    if kind == "bw" and unit not in ("Gb/sec", "MB/sec"):
        raise BadInput(f"{path}: unknown bw_unit {json.dumps(unit)}")
    rows = doc.get("results")
    if not isinstance(rows, list) or not rows:
        raise BadInput(f"{path}: no 'results' rows")
    keys = ("bw_average", "bw_peak") if kind == "bw" else ("t_typical", "p99")
    out = []
    for i, row in enumerate(rows):
        where = f"{path}: results[{i}]"
        if not isinstance(row, dict):
            raise BadInput(f"{where}: not an object")
        size = row.get("bytes")
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise BadInput(f"{where}: 'bytes' is {json.dumps(size)}, not a positive integer")
        vals = [number(row, k, where) for k in keys]
        if kind == "bw" and unit == "MB/sec":
            vals = [v * MB * 8 / 1e9 for v in vals]
        out.append((size, *vals))
    sizes = [r[0] for r in out]
    if len(set(sizes)) != len(sizes):
        raise BadInput(f"{path}: a message size appears twice")
    return doc, sorted(out)


def size_label(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def describe(doc):
    parts = [doc.get("title", "?"), doc.get("connection", "?")]
    if "peer_device" in doc:
        parts.append(f"{doc.get('device', '?')} <-> {doc['peer_device']}")
    elif "peer" in doc:
        parts.append(f"{doc.get('device', '?')}, peer {doc['peer']}")
    if "mtu" in doc:
        parts.append(f"MTU {doc['mtu']}")
    return ", ".join(str(p) for p in parts)


def plot(bw_doc, bw, lat_doc, lat, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError as e:
        raise BadInput(f"matplotlib is missing ({e}): install python3-matplotlib "
                       "(tools/deps.txt)") from None

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 8), constrained_layout=True)
    fig.suptitle("droce-perf: bandwidth and latency against message size")

    top.plot([r[0] for r in bw], [r[1] for r in bw], "o-", label="average")
    if any(r[2] > 0 for r in bw):  # -N (--noPeak) leaves every peak 0: none measured
        top.plot([r[0] for r in bw], [r[2] for r in bw], "^--", alpha=0.7, label="peak")
    top.set_ylabel("bandwidth [Gb/s]")
    top.set_ylim(bottom=0)
    top.set_title(describe(bw_doc), fontsize="medium")

    bottom.plot([r[0] for r in lat], [r[1] for r in lat], "o-", label="typical (median)")
    bottom.plot([r[0] for r in lat], [r[2] for r in lat], "^--", alpha=0.7,
                label="99th percentile")
    bottom.set_yscale("log")
    plain = FuncFormatter(lambda y, _: f"{y:g}")
    times = [t for r in lat for t in r[1:] if t > 0]
    bottom.yaxis.set_major_formatter(plain)
    # within one decade the minor ticks are the only labels: plain numbers too
    if times and max(times) < 10 * min(times):
        bottom.yaxis.set_minor_formatter(plain)
    else:
        bottom.yaxis.set_minor_formatter(NullFormatter())
    bottom.set_ylabel("latency [µs]")
    bottom.set_xlabel("message size [bytes]")
    bottom.set_title(describe(lat_doc), fontsize="medium")

    bottom.set_xscale("log", base=2)
    sizes = [r[0] for r in bw + lat]
    bottom.set_xlim(min(sizes) / 1.4, max(sizes) * 1.4)  # the measured sizes, no more
    bottom.xaxis.set_major_locator(LogLocator(base=2, numticks=30))
    bottom.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(int(round(x)))))
    bottom.tick_params(axis="x", labelrotation=45)
    for ax in (top, bottom):
        ax.grid(True, which="major", alpha=0.4)
        ax.legend()
    try:
        fig.savefig(out, format="png", dpi=100)
    except OSError as e:
        try:
            os.unlink(out)
        except OSError:
            pass
        raise BadInput(f"{out}: {e.strerror}") from None
    finally:
        plt.close(fig)


def main(argv):
    usage = (f"usage: {PROG}.py BW_JSON LAT_JSON OUT_PNG\n"
             "  BW_JSON:  droce-perf *_bw -a --out_json\n"
             "  LAT_JSON: droce-perf *_lat -a --out_json")
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(usage)
        return 0
    if len(argv) != 4:
        print(usage, file=sys.stderr)
        return 2
    try:
        bw_doc, bw = load(argv[1], "bw")
        lat_doc, lat = load(argv[2], "lat")
        plot(bw_doc, bw, lat_doc, lat, argv[3])
    except BadInput as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    print(argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
