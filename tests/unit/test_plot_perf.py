#!/usr/bin/python3
"""tools/plot-perf.py: the PNG it draws from droce-perf's -a JSON, and its
refusals of bad input.

    test_plot_perf.py PLOT_SCRIPT DATA_DIR

The fixtures are real droce-perf --out_json files (DATA_DIR/droce-perf-write_bw-all.json
and droce-perf-write_lat-all.json, write_bw and write_lat -a --loopback up to 64 KiB).
One TAP-style line per check; exit status 0 when every check passes, 1 when
one fails, 77 (skip) when /usr/bin/python3 has no matplotlib.
"""
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

checks = []


def check(ok, what):
    checks.append(bool(ok))
    print(f"{'ok' if ok else 'not ok'} {len(checks)} - {what}", flush=True)


def run(plot, *args):
    # the PNG's path on stdout, a failure's reason on stderr
    return subprocess.run([sys.executable, plot, *args], capture_output=True, text=True,
                          timeout=120)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def png_chunks(data):
    """(type, payload) of each chunk after the signature; None when truncated."""
    out, at = [], len(PNG_SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            return None
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if at + 12 + length > len(data):
            return None
        out.append((kind, data[at + 8:at + 8 + length]))
        at += 12 + length
    return out


def good_run(plot, bw, lat, tmp):
    png = os.path.join(tmp, "good.png")
    r = run(plot, bw, lat, png)
    check(r.returncode == 0, f"good input: exit status 0 (got {r.returncode}: {r.stderr.strip()})")
    check(r.stdout.strip() == png, "good input: prints the PNG's path")
    data = open(png, "rb").read() if os.path.exists(png) else b""
    check(len(data) > 0, f"good input: the PNG is not empty ({len(data)} bytes)")
    check(data.startswith(PNG_SIGNATURE), "good input: the file starts with PNG's signature")
    chunks = png_chunks(data) or []
    check(chunks and chunks[0][0] == b"IHDR", "good input: the first chunk is IHDR")
    w, h = struct.unpack(">II", chunks[0][1][:8]) if chunks and len(chunks[0][1]) >= 8 else (0, 0)
    check(w > 0 and h > 0, f"good input: the image has a size ({w} x {h})")
    check(chunks and chunks[-1][0] == b"IEND", "good input: the file ends with IEND (complete)")


def mb_run(plot, bw, lat, tmp):
    """A run reported in MB/sec is converted, not refused."""
    doc = json.load(open(bw, encoding="utf-8"))
    doc["bw_unit"] = "MB/sec"
    mb = write(os.path.join(tmp, "mb.json"), json.dumps(doc))
    png = os.path.join(tmp, "mb.png")
    r = run(plot, mb, lat, png)
    check(r.returncode == 0 and os.path.exists(png) and os.path.getsize(png) > 0,
          f"MB/sec bandwidth: plotted ({r.returncode}: {r.stderr.strip()})")


def bad_run(plot, name, args, want_status, want_text, tmp):
    args = [os.path.join(tmp, name + ".png") if a == "PNG" else a for a in args]
    r = run(plot, *args)
    check(r.returncode == want_status,
          f"{name}: exit status {want_status} (got {r.returncode})")
    check(want_text in r.stderr, f"{name}: stderr says {want_text!r} (got {r.stderr.strip()!r})")
    if len(args) == 3:
        check(not os.path.exists(args[2]), f"{name}: no PNG left behind")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    plot, data = argv[1], argv[2]
    if importlib.util.find_spec("matplotlib") is None:  # what plot-perf.py needs
        print("1..0 # SKIP python3-matplotlib is not installed (tools/deps.txt)")
        return 77
    bw = os.path.join(data, "droce-perf-write_bw-all.json")
    lat = os.path.join(data, "droce-perf-write_lat-all.json")
    with tempfile.TemporaryDirectory(prefix="droce-plot-") as tmp:
        good_run(plot, bw, lat, tmp)
        mb_run(plot, bw, lat, tmp)

        bw_doc = json.load(open(bw, encoding="utf-8"))
        empty = dict(bw_doc, results=[])
        bad_bytes = dict(bw_doc, results=[dict(bw_doc["results"][0], bytes="2")])
        no_avg = dict(bw_doc, results=[{k: v for k, v in bw_doc["results"][0].items()
                                        if k != "bw_average"}])
        nan_peak = dict(bw_doc, results=[dict(bw_doc["results"][0], bw_peak=None)])
        twice = dict(bw_doc, results=bw_doc["results"][:1] * 2)
        unit = dict(bw_doc, bw_unit="furlongs")
        files = {
            "empty": write(os.path.join(tmp, "empty.json"), json.dumps(empty)),
            "bad_bytes": write(os.path.join(tmp, "bad_bytes.json"), json.dumps(bad_bytes)),
            "no_avg": write(os.path.join(tmp, "no_avg.json"), json.dumps(no_avg)),
            "nan_peak": write(os.path.join(tmp, "nan_peak.json"), json.dumps(nan_peak)),
            "twice": write(os.path.join(tmp, "twice.json"), json.dumps(twice)),
            "unit": write(os.path.join(tmp, "unit.json"), json.dumps(unit)),
            "not_json": write(os.path.join(tmp, "not_json.json"), '{"results": [\n'),
            "array": write(os.path.join(tmp, "array.json"), "[1, 2]"),
        }
        missing = os.path.join(tmp, "missing.json")
        cases = [
            ("missing_bw", [missing, lat, "PNG"], 1, "missing.json: No such file"),
            ("missing_lat", [bw, missing, "PNG"], 1, "missing.json: No such file"),
            ("not_json", [files["not_json"], lat, "PNG"], 1, "not JSON"),
            ("not_an_object", [files["array"], lat, "PNG"], 1, "not a droce-perf --out_json"),
            ("latency_as_bandwidth", [lat, lat, "PNG"], 1, "not a bandwidth run"),
            ("bandwidth_as_latency", [bw, bw, "PNG"], 1, "not a latency run"),
            ("no_rows", [files["empty"], lat, "PNG"], 1, "no 'results' rows"),
            ("bytes_not_integer", [files["bad_bytes"], lat, "PNG"], 1, "'bytes' is \"2\""),
            ("no_bw_average", [files["no_avg"], lat, "PNG"], 1, "'bw_average' is null"),
            ("null_bw_peak", [files["nan_peak"], lat, "PNG"], 1, "'bw_peak' is null"),
            ("size_twice", [files["twice"], lat, "PNG"], 1, "appears twice"),
            ("unknown_unit", [files["unit"], lat, "PNG"], 1, "unknown bw_unit"),
            ("output_folder_missing", [bw, lat, os.path.join(tmp, "no", "x.png")], 1,
             os.path.join(tmp, "no", "x.png")),
            ("two_arguments", [bw, lat], 2, "usage:"),
        ]
        for name, args, status, text in cases:
            bad_run(plot, name, args, status, text, tmp)
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
