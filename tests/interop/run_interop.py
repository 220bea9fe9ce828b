#!/usr/bin/python3
"""droce against Linux Soft-RoCE: the `interop` suite.

    run_interop.py --build BUILD_DIR [--out DIR] [--only NAME[,NAME...]] [--budget SECS]

Boots one Linux Soft-RoCE VM (tools/peer/build-image.sh makes and caches its
image under BUILD_DIR/peer), wires it and droce's af_packet port to a bridge in a
network namespace of its own, and runs every scenario of scenarios.py in both
directions: the unmodified program on droce (through the drop-in
libibverbs.so.1) against the same program on rxe0. A cell passes when both ends
finish every iteration, each saw the other's GID, and droce-pcap finds every
RoCEv2 frame of the bridge's capture well formed with a good ICRC, frames from
both ends among them.

Prints one TAP-style line per cell and the matrix; keeps each cell's outputs,
capture and verdict in DIR (default BUILD_DIR/interop). Exit status 0 when every
cell passes, 1 when one fails, 77 (skip) when this machine cannot run the suite
(not root, no /dev/net/tun, qemu or tcpdump missing, no kernel package).
"""

import argparse
import fcntl
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402
import droce_side  # noqa: E402
import link as L  # noqa: E402
import peer_vm  # noqa: E402
from scenarios import DIRECTIONS, GID_IP6, SCENARIOS  # noqa: E402

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = "/run/lock/droce-interop.lock"
BOOT_SECS = 120
LISTEN_SECS = 30
ROCE_PORT = 4791
HW_COUNTERS = "/sys/class/infiniband/rxe0/ports/1/hw_counters"


def say(*words):
    print(*words, flush=True)


def skip(reason):
    say(f"1..0 # SKIP {reason}")
    sys.exit(SKIP)


def preflight(build):
    if os.geteuid() != 0:
        skip("needs root (network namespace, tap device, af_packet)")
    if not os.path.exists("/dev/net/tun"):
        skip("no /dev/net/tun: the peer VM has no tap device")
    for prog in ("qemu-system-x86_64", "tcpdump", "ip", "ss"):
        if shutil.which(prog) is None:
            skip(f"{prog} is missing (tools/setup.sh installs tools/deps.txt)")
    for prog in {s.program for s in SCENARIOS}:
        if shutil.which(prog) is None:
            skip(f"{prog} is missing (tools/setup.sh installs tools/deps.txt)")
    dropin = os.path.join(build, "lib", "dropin")
    if not os.path.exists(os.path.join(dropin, "libibverbs.so.1")):
        sys.exit(f"interop: no drop-in library in {dropin}: build droce first")


def build_image(build):
    image = os.path.join(build, "peer")
    p = subprocess.run([os.path.join(ROOT, "tools", "peer", "build-image.sh"), image])
    if p.returncode == SKIP:
        skip("the peer's image cannot be built on this machine (see above)")
    if p.returncode != 0:
        sys.exit("interop: tools/peer/build-image.sh failed")
    return image


def take_lock():
    """One interop VM at a time on a machine: they are CPU-heavy under TCG."""
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    f = open(LOCK, "w")
    for _ in range(240):
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            time.sleep(0.5)
    sys.exit(f"interop: another interop run holds {LOCK}")


def cell_text(r):
    """A matrix cell: the verdict, the RoCEv2 frames each end sent (of which sent
    again) and the frames the peer's tap dropped, or why the cell failed."""
    if r is None:
        return "-"
    if not r["ok"]:
        return "FAIL: " + "; ".join(r["reasons"])

    def sent(ips):
        flows = [f for f in r.get("flows", []) if f["src"] in ips]
        return (f"{sum(f['packets'] for f in flows)}/"
                f"{sum(f['retransmits'] for f in flows)}")

    text = (f"pass: droce {sent((L.DROCE_IP4, L.DROCE_IP6))}, "
            f"rxe {sent((L.PEER_IP4, L.PEER_IP6))}")
    if r.get("tap_dropped"):
        text += f", tap dropped {r['tap_dropped']}"
    return text


def gid_of(sc, ip4, ip6):
    """The GID an end must report for its peer at @ip4 / @ip6 in scenario @sc."""
    return ipaddress.IPv6Address(ip6 if sc.gid == GID_IP6 else f"::ffff:{ip4}")


class Suite:
    def __init__(self, build, out, image, budget):
        self.build = build
        self.out = out
        self.image = image
        self.deadline = time.monotonic() + budget
        self.dropin = os.path.join(build, "lib", "dropin")
        self.droce_pcap = os.path.join(build, "app", "droce-pcap", "droce-pcap")
        self.link = L.Link()
        self.vm = None
        self.results = []
        self.broken = False

    def start(self):
        self.link.open()
        self.vm = peer_vm.PeerVM(self.image, self.link, L.TAP, L.PEER_MAC, L.PEER_IP4,
                                 L.PEER_IP6, L.PREFIX4, L.PREFIX6, L.MTU,
                                 os.path.join(self.out, "peer-console.log"))
        t = time.monotonic()
        self.vm.boot(BOOT_SECS)
        say(f"# peer up in {time.monotonic() - t:.1f} s, rxe0 GIDs {self.vm.gids}")

    def save_dmesg(self):
        """The peer's kernel messages (rxe's complaints, if any) beside the cells."""
        try:
            status, dmesg = self.vm.run("dmesg", 20)
        except peer_vm.PeerError:
            return
        with open(os.path.join(self.out, "peer-dmesg.txt"), "w") as f:
            f.write(dmesg)

    def stop(self):
        """End the VM and remove the namespace, without asking the peer anything: this
        also runs when the harness broke or a signal came."""
        if self.vm is not None:
            self.vm.close()
        self.link.close()

    def hw_counters(self):
        status, out = self.vm.run(f"cd {HW_COUNTERS} && grep . *", 20)
        counters = {}
        for line in out.splitlines():
            name, _, value = line.partition(":")
            if value.strip().isdigit():
                counters[name] = int(value)
        return counters

    def peer_loss(self, loss):
        """netem on the peer's eth0 drops @loss of the RoCEv2/IPv4 frames it sends (0: none)."""
        tc = "/usr/sbin/tc"
        if loss:
            script = (f"modprobe -a sch_prio sch_netem cls_u32 && "
                      f"{tc} qdisc add dev eth0 root handle 1: prio && "
                      f"{tc} qdisc add dev eth0 parent 1:3 handle 30: netem loss {loss * 100}% && "
                      f"{tc} filter add dev eth0 parent 1: protocol ip prio 1 u32 "
                      f"match ip dport {ROCE_PORT} 0xffff flowid 1:3")
        else:
            script = f"{tc} qdisc del dev eth0 root"
        status, out = self.vm.run(script, 20)
        if status != 0:
            raise peer_vm.PeerError(f"netem on the peer: {out.strip()}")

    def peer_listening(self, port):
        script = (f'i=0; until /usr/bin/ss -ltnH "sport = :{port}" | grep -q .; do '
                  f'i=$((i + 1)); [ $i -lt {LISTEN_SECS * 10} ] || exit 1; sleep 0.1; done')
        status, _ = self.vm.run(script, LISTEN_SECS + 5)
        return status == 0

    def droce_listening(self, prog, port):
        end = time.monotonic() + LISTEN_SECS
        while time.monotonic() < end and prog.running():
            if self.link.listening(port):
                return True
            time.sleep(0.1)
        return False

    def run_cell(self, sc, direction, port):
        cell = f"{sc.name}-{direction}"
        cdir = os.path.join(self.out, cell)
        os.makedirs(cdir)
        droce_argv = sc.argv(droce_side.DEVICE, port, droce=True)
        if droce_argv[0] == "droce-perf":
            droce_argv[0] = os.path.join(self.build, "app", "droce-perf", "droce-perf")
        peer_cmd = " ".join(["exec", *sc.argv("rxe0", port)])
        reasons = []
        if sc.loss:
            self.peer_loss(sc.loss)
        before = self.hw_counters()
        tap_before = self.link.tap_dropped()
        cap = capture.Capture(self.link, L.BRIDGE, os.path.join(cdir, "capture.pcap"))
        prog = job = None
        droce_status = peer_status = None
        peer_out = ""
        try:
            if direction == "droce-server":
                prog = droce_side.Program(self.link, self.dropin, droce_argv,
                                          os.path.join(cdir, "droce.txt"), sc.loss)
                if not self.droce_listening(prog, port):
                    reasons.append("droce's server never listened")
                else:
                    job = self.vm.start(f"{peer_cmd} {L.BRIDGE_IP4}", sc.secs)
                    peer_status, peer_out = self.vm.wait(job, sc.secs + 10)
                droce_status = prog.wait(timeout=15 if job else 1)
            else:
                job = self.vm.start(peer_cmd, sc.secs)
                if not self.peer_listening(port):
                    reasons.append("the peer's server never listened")
                else:
                    prog = droce_side.Program(self.link, self.dropin,
                                              droce_argv + [L.PEER_IP4],
                                              os.path.join(cdir, "droce.txt"), sc.loss)
                    droce_status = prog.wait(timeout=sc.secs)
                peer_status, peer_out = self.vm.wait(job, 15)
        except BaseException:
            # unwinding (the harness broke, or a signal): end what runs here and leave
            # the peer alone, it may be the one that does not answer
            if prog is not None:
                prog.kill()
            cap.stop()
            raise
        if prog is not None:
            prog.kill()
        if job is not None and peer_status is None:
            self.vm.stop(job)
            self.vm.wait(job, 10)
        cap.stop()
        droce_out = prog.output() if prog is not None else ""
        with open(os.path.join(cdir, "peer.txt"), "w") as f:
            f.write(peer_out)
        after = self.hw_counters()
        tap_dropped = self.link.tap_dropped() - tap_before
        if sc.loss:
            self.peer_loss(0)

        droce_serves = direction == "droce-server"
        self.check_end("droce", droce_status, droce_out, sc, reasons,
                       gid_of(sc, L.PEER_IP4, L.PEER_IP6), prog is not None, droce_serves)
        self.check_end("the peer", peer_status, peer_out, sc, reasons,
                       gid_of(sc, L.DROCE_IP4, L.DROCE_IP6), job is not None, not droce_serves)
        summary = self.check_capture(os.path.join(cdir, "capture.pcap"), sc, reasons,
                                     droce_serves)
        if cap.dropped():
            reasons.append(f"the capture lost {cap.dropped()} frames: its verdict is partial")
        rxe = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
        result = {"scenario": sc.name, "direction": direction, "ok": not reasons,
                  "reasons": reasons, "rxe_counters": rxe, "capture_dropped": cap.dropped(),
                  "tap_dropped": tap_dropped,
                  "flows": summary.get("flows", []) if summary else []}
        with open(os.path.join(cdir, "result.json"), "w") as f:
            json.dump(result, f, indent=1)
        return result

    @staticmethod
    def check_end(who, status, output, sc, reasons, peer_gid, ran, serves):
        if not ran:
            return
        if status is None:
            reasons.append(f"{who} did not end within {sc.secs} s")
        elif status != 0:
            reasons.append(f"{who} exited with status {status}")
        if not (serves and sc.quiet_server) and not sc.finished(output):
            reasons.append(f"{who} did not finish {sc.iters} iterations")
        gids = sc.remote_gids(output)
        if not gids:
            reasons.append(f"{who} reported no remote GID")
        elif any(g != peer_gid for g in gids):
            reasons.append(f"{who} saw remote GID {gids[0]}, not {peer_gid}")

    def check_capture(self, path, sc, reasons, droce_serves):
        status, summary = capture.verdict(self.droce_pcap, path)
        if summary is None:
            reasons.append(f"droce-pcap could not read the capture (status {status})")
            return None
        bad = summary["malformed"]
        icrc = summary["status"]["icrc_error"]
        if status != 0 or bad != 0:
            reasons.append(f"droce-pcap: {bad} malformed RoCEv2 frames ({icrc} ICRC errors)")
        ends = [("droce", L.DROCE_IP6 if sc.gid == GID_IP6 else L.DROCE_IP4, droce_serves),
                ("the peer", L.PEER_IP6 if sc.gid == GID_IP6 else L.PEER_IP4,
                 not droce_serves)]
        if "atomic" in sc.program:
            for src, psn, values in capture.atomic_replays_differ(self.droce_pcap, path):
                reasons.append(f"{src} answered the atomic of PSN {psn} with different "
                               f"original values {values}")
        senders = {flow["src"] for flow in summary["flows"]}
        if sc.expect_rnr:
            # the receiver (the server of a SEND test) must have sent RNR NAKs: else the
            # scenario proved nothing about either stack's RNR path
            for who, ip, serves in ends:
                rnr = sum(f["rnr_naks"] for f in summary["flows"] if f["src"] == ip)
                if serves and rnr == 0:
                    reasons.append(f"{who}, the receiver, sent no RNR NAK")
        for who, ip, serves in ends:
            if sc.one_way and serves:
                continue
            if ip not in senders:
                reasons.append(f"no RoCEv2 frame from {who} ({ip}) in the capture")
        return summary

    def run(self, only):
        cells = [(sc, d) for sc in SCENARIOS for d in DIRECTIONS
                 if not only or sc.name in only or f"{sc.name}-{d}" in only]
        say(f"1..{len(cells)}")
        broken = None
        for n, (sc, direction) in enumerate(cells, 1):
            name = f"{sc.name} {direction}"
            r = {"scenario": sc.name, "direction": direction, "ok": False}
            if broken:
                r["reasons"] = [f"not run: {broken}"]
            elif time.monotonic() > self.deadline:
                r["reasons"] = ["not run: the suite's time budget was spent"]
            else:
                t = time.monotonic()
                try:
                    r = self.run_cell(sc, direction, 18515 + n)
                except (peer_vm.PeerError, capture.CaptureError, L.LinkError) as e:
                    # the harness itself broke (the peer died, the link went): what
                    # follows would fail for the same reason
                    broken = f"the harness broke earlier ({e})"
                    r["reasons"] = [f"harness: {e}"]
                    self.broken = True
                r["seconds"] = round(time.monotonic() - t, 1)
            self.results.append(r)
            if r["ok"]:
                say(f"ok {n} - {name} ({r['seconds']} s)")
            else:
                say(f"not ok {n} - {name}: " + "; ".join(r["reasons"]))

    def report(self):
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1)
        say("# scenario        " + "".join(f"{d:<14}" for d in DIRECTIONS))
        rows = []
        for sc in SCENARIOS:
            row = {r["direction"]: r for r in self.results if r["scenario"] == sc.name}
            if row:
                cells = "".join(f"{('pass' if row[d]['ok'] else 'FAIL') if d in row else '-':<14}"
                                for d in DIRECTIONS)
                say(f"# {sc.name:<15} {cells}")
                rows.append((sc, row))
        # the same matrix in Markdown, for doc/interop.md; "droce 100/2" means
        # droce sent 100 RoCEv2 frames, 2 of them again (droce-pcap's retrans)
        with open(os.path.join(self.out, "matrix.md"), "w") as f:
            f.write("| scenario | what | " + " | ".join(DIRECTIONS) + " |\n")
            f.write("|---|---|" + "---|" * len(DIRECTIONS) + "\n")
            for sc, row in rows:
                cells = [cell_text(row.get(d)) for d in DIRECTIONS]
                f.write(f"| `{sc.name}` | {sc.what} | " + " | ".join(cells) + " |\n")
        return all(r["ok"] for r in self.results)


class Interrupted(BaseException):
    """A signal: no handler on the way out may take it for a failed cell."""


def interrupted(signum, frame):
    raise Interrupted(f"signal {signum}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="droce's meson build folder")
    ap.add_argument("--out", help="where each cell's outputs go (default BUILD/interop)")
    ap.add_argument("--only", default="", help="comma-separated scenarios or cells")
    ap.add_argument("--budget", type=int, default=300,
                    help="seconds after which the cells left are not run (default 300)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out or os.path.join(build, "interop"))

    preflight(build)
    image = build_image(build)
    lock = take_lock()
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    # meson stops a test with SIGTERM: unwind so that the VM and the namespace go
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, interrupted)
    suite = Suite(build, out, image, args.budget)
    try:
        suite.start()
        suite.run({x for x in args.only.split(",") if x})
        if not suite.broken:
            suite.save_dmesg()
    finally:
        suite.stop()
        lock.close()
    ok = suite.report()
    say(f"# outputs, captures and verdicts in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Interrupted as e:
        sys.exit(f"interop: stopped by {e}; the VM and the namespace are gone")
