"""Captures and droce-pcap's verdict on them: a tcpdump capture of the bridge
link (all of droce's and the peer's frames, the out-of-band TCP too), or on the
vhost link the capture droce's own port writes (every frame it sends, before the
device, and every frame it receives)."""

import json
import re
import struct
import subprocess
import time

PSN_MASK = (1 << 24) - 1
# RC responses (BTH opcodes): RDMA READ response FIRST, MIDDLE, LAST, ONLY, ACKNOWLEDGE,
# ATOMIC ACKNOWLEDGE; their PSNs are the requester's, not the sender's own
RC_RESPONSES = range(0x0D, 0x13)
READ_REQUEST, READ_RESPONSE_FIRST, READ_RESPONSE_MIDDLE, READ_RESPONSE_LAST = 0x0C, 0x0D, 0x0E, 0x0F


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


def _frames(droce_pcap, path):
    """droce-pcap's JSON line of each RoCEv2 frame of @path, in capture order."""
    p = subprocess.run([droce_pcap, "-j", path], capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        if line.startswith('{"frame"'):
            yield json.loads(line)


def _ahead(psn, expected):
    """How many PSNs @psn lies past @expected (0 when at or before it)."""
    d = (psn - expected) & PSN_MASK
    return d if d < (1 << 23) else 0


def psn_holes(droce_pcap, path, pmtu, start=1):
    """Frames missing from a capture whose every frame reached it (the vhost link:
    droce records what it sends before the device, and what the peer sends reaches
    droce whole): a requester never skips a PSN, going back (a retransmission) is
    allowed, going forward past the next PSN is a hole. So is a READ response whose
    MIDDLE or LAST does not follow the packet before it. A READ request takes one
    PSN per response packet (@pmtu bytes each). Frames before the @start-th of the
    file are not followed: on the vhost link they may be the peer's, queued in its
    NIC while no program held the link, with PSNs of a QP that is gone. Returns
    (sender, dest QP, PSN expected, PSN seen) for each hole."""
    nxt, reads, holes = {}, {}, []
    for f in _frames(droce_pcap, path):
        op, key, psn = f.get("opcode"), (f.get("src"), f.get("qpn")), f.get("psn")
        if op is None or psn is None or op >= 0x80 or f.get("frame", 0) < start:
            continue
        if op in RC_RESPONSES:
            prev = reads.get(key)
            if (op in (READ_RESPONSE_MIDDLE, READ_RESPONSE_LAST) and prev is not None and
                    prev[0] in (READ_RESPONSE_FIRST, READ_RESPONSE_MIDDLE) and
                    _ahead(psn, prev[1] + 1)):
                holes.append((key[0], key[1], (prev[1] + 1) & PSN_MASK, psn))
            reads[key] = (op, psn)
            continue
        if key in nxt and _ahead(psn, nxt[key]):
            holes.append((key[0], key[1], nxt[key], psn))
        span = 1
        if op == READ_REQUEST and "reth" in f:
            span = max(1, -(-f["reth"]["len"] // pmtu))
        nxt[key] = (psn + span) & PSN_MASK
    return holes


def _records(path):
    """(number from 1, bytes) of each frame of the pcap file @path."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        order = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        n = 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            caplen = struct.unpack(order + "IIII", rec)[2]
            data = f.read(caplen)
            if len(data) < caplen:
                return
            n += 1
            yield n, data


def _mac(mac):
    return bytes(int(b, 16) for b in mac.split(":"))


def frames_from(path, mac):
    """Frames of the pcap file @path whose Ethernet source is @mac (any protocol)."""
    want = _mac(mac)
    return sum(1 for _, data in _records(path) if data[6:12] == want)


def first_from(path, mac):
    """The number (from 1) of the first frame from @mac in @path, None if none."""
    want = _mac(mac)
    return next((n for n, data in _records(path) if data[6:12] == want), None)


def cm_messages(droce_pcap, path):
    """The CM MADs of @path (GSI packets to QP1, droce-pcap's "cm" object): a list of
    (sender's IP, message name, the message's fields), in capture order."""
    return [(f["src"], f["cm"]["msg"], f["cm"]) for f in _frames(droce_pcap, path)
            if "cm" in f]


def rc_senders(droce_pcap, path):
    """The IPs that sent RoCEv2 frames to a QP other than QP1 (the connection's traffic)."""
    return {f["src"] for f in _frames(droce_pcap, path)
            if f.get("qpn") is not None and f["qpn"] != 1}
