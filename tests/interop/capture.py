"""A tcpdump capture of the link's bridge (all of droce's and the peer's frames,
the out-of-band TCP too) and droce-pcap's verdict on it."""

import json
import re
import subprocess
import time


class CaptureError(Exception):
    pass


class Capture:
    def __init__(self, link, iface, path):
        self.path = path
        self.err_path = path + ".tcpdump.txt"
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            # a 64 MiB ring of frame-sized slots (a snap length of 2048 > the 1514-byte
            # frames): on a busy 2-CPU machine tcpdump falls behind bursts
            link.argv(["tcpdump", "-i", iface, "-s", "2048", "-B", "65536", "-U",
                       "--immediate-mode", "-n", "-w", path]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
        # tcpdump says "listening on" once its socket is bound: frames before are lost
        for _ in range(100):
            with open(self.err_path, "rb") as f:
                if b"listening on" in f.read():
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise CaptureError(f"tcpdump did not start on {iface}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()

    def dropped(self):
        """Frames tcpdump lost (its closing statistics), None if it gave none."""
        with open(self.err_path) as f:
            m = re.search(r"(\d+) packets? dropped by kernel", f.read())
        return int(m.group(1)) if m else None


def verdict(droce_pcap, path):
    """droce-pcap's summary of a capture: (exit status, the summary dict or None)."""
    p = subprocess.run([droce_pcap, "-j", "-S", path], capture_output=True, text=True,
                       timeout=60)
    summary = None
    for line in p.stdout.splitlines():
        if line.startswith('{"summary"'):
            summary = json.loads(line)["summary"]
    return p.returncode, summary


def atomic_replays_differ(droce_pcap, path):
    """Atomic responses that disagree: a responder answers a repeated atomic request
    from the result it saved and never executes it again, so every
    ATOMIC ACKNOWLEDGE of one PSN carries the same original value. Returns
    (sender, PSN, values) for each PSN where they differ."""
    p = subprocess.run([droce_pcap, "-j", path], capture_output=True, text=True, timeout=60)
    seen = {}
    for line in p.stdout.splitlines():
        if '"atomicacketh"' not in line:
            continue
        f = json.loads(line)
        seen.setdefault((f["src"], f["qpn"], f["psn"]), set()).add(f["atomicacketh"]["orig"])
    return [(src, psn, sorted(v)) for (src, qpn, psn), v in seen.items() if len(v) > 1]
