#!/usr/bin/python3
"""droce against Linux Soft-RoCE: the `interop` suite.

    run_interop.py --build BUILD_DIR [--out DIR] [--only NAME[,NAME...]] [--budget SECS]

Boots one Linux Soft-RoCE VM (tools/peer/build-image.sh makes and caches its
image under BUILD_DIR/peer), wires it and droce's af_packet port to a bridge in a
network namespace of its own (and, when a selected scenario runs at path MTU
4096, droce's vhost port to its second NIC), and runs every scenario of
scenarios.py in both directions: the unmodified program on droce (through the
drop-in libibverbs.so.1, and librdmacm.so.1 for rping and udaddy) against the same
program on rxe0 (rxe1). A cell passes when both ends finish every iteration, each
saw the other's GID (in the CM's REQ for rping), and droce-pcap
finds every RoCEv2 frame of the capture (the bridge's; droce's port's on the
vhost link, with no PSN missing) well formed with a good ICRC, frames from both
ends among them.

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
from scenarios import DIRECTIONS, GID_IP6, SCENARIOS, VHOST  # noqa: E402

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = "/run/lock/droce-interop.lock"
BOOT_SECS = 120
LISTEN_SECS = 30
# an rdma_cm listen is no socket: droce's server gets this long to start its engine and listen
CM_LISTEN_SECS = 4
ROCE_PORT = 4791
HW_COUNTERS = "/sys/class/infiniband/{}/ports/1/hw_counters"
SOCKET_SECS = 30


class Ends:
    """Who is who on a link: droce's and the peer's addresses, the peer's device."""

    def __init__(self, link):
        if link == VHOST:
            self.droce_ip4, self.droce_ip6 = L.VHOST_DROCE_IP4, L.VHOST_DROCE_IP6
            self.droce_mac = L.VHOST_DROCE_MAC
            self.peer_ip4, self.peer_ip6, self.peer_dev = L.VHOST_PEER_IP4, L.VHOST_PEER_IP6, "rxe1"
        else:
            self.droce_ip4, self.droce_ip6 = L.DROCE_IP4, L.DROCE_IP6
            self.droce_mac = L.DROCE_MAC
            self.peer_ip4, self.peer_ip6, self.peer_dev = L.PEER_IP4, L.PEER_IP6, "rxe0"


DROCE_IPS = (L.DROCE_IP4, L.DROCE_IP6, L.VHOST_DROCE_IP4, L.VHOST_DROCE_IP6)
PEER_IPS = (L.PEER_IP4, L.PEER_IP6, L.VHOST_PEER_IP4, L.VHOST_PEER_IP6)


def say(*words):
    print(*words, flush=True)


def skip(reason):
    say(f"1..0 # SKIP {reason}")
    sys.exit(SKIP)


def preflight(build, vhost):
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
    for lib in ("libibverbs.so.1", "librdmacm.so.1"):
        if not os.path.exists(os.path.join(dropin, lib)):
            sys.exit(f"interop: no drop-in {lib} in {dropin}: build droce first")
    if vhost and not os.path.exists(os.path.join(build, "app", "droce-pmd", "droce-pmd")):
        sys.exit("interop: no droce-pmd (it holds the vhost link while the peer boots): "
                 "build droce first")


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

    text = f"pass: droce {sent(DROCE_IPS)}, rxe {sent(PEER_IPS)}"
    if r.get("tap_dropped"):
        text += f", tap dropped {r['tap_dropped']}"
    if r.get("vhost_dropped"):
        text += f", vhost dropped {r['vhost_dropped']}"
    return text


def selected(only):
    """The cells to run: (scenario, direction), every one when @only is empty."""
    return [(sc, d) for sc in SCENARIOS for d in DIRECTIONS
            if not only or sc.name in only or f"{sc.name}-{d}" in only]


def ends_ip(sc, ends, droce):
    """The RoCE address of droce's end (@droce) or the peer's in scenario @sc."""
    if droce:
        return ends.droce_ip6 if sc.gid == GID_IP6 else ends.droce_ip4
    return ends.peer_ip6 if sc.gid == GID_IP6 else ends.peer_ip4


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
        self.droce_pmd = os.path.join(build, "app", "droce-pmd", "droce-pmd")
        self.link = L.Link()
        self.vm = None
        self.holder = None
        self.vhost_broken = None
        self.results = []
        self.broken = False

    def start(self, vhost):
        """Open the links and boot the peer; @vhost: with the vhost link too. When the
        vhost link does not come up, the peer boots without it: its cells fail, the
        others run."""
        self.link.open()
        if vhost:
            try:
                self.boot(True)
                return
            except peer_vm.PeerError as e:
                self.vhost_broken = str(e)
                say(f"# the vhost link did not come up ({e}); the peer boots without it")
                self.stop_vm()
        self.boot(False)

    def boot(self, vhost):
        nic = None
        if vhost:
            self.link.open_vhost()
            nic = peer_vm.VhostNic(self.link.vhost_socket, L.VHOST_PEER_MAC, L.VHOST_PEER_IP4,
                                   L.VHOST_PEER_IP6, L.PREFIX4, L.PREFIX6, L.VHOST_MTU)
        self.vm = peer_vm.PeerVM(self.image, self.link, L.TAP, L.PEER_MAC, L.PEER_IP4,
                                 L.PEER_IP6, L.PREFIX4, L.PREFIX6, L.MTU,
                                 os.path.join(self.out, "peer-console.log"), vhost=nic)
        t = time.monotonic()
        self.vm.launch()
        alive = None
        if vhost:
            self.hold_vhost()
            alive = self.holder_alive
        self.vm.wait_ready(BOOT_SECS, alive)
        if self.holder is not None:
            status = self.holder.stop()
            if status != 0:
                raise peer_vm.PeerError(f"the vhost link's holder (droce-pmd) ended with "
                                        f"status {status}: {self.holder.output()[-500:].strip()}")
            self.holder = None
        say(f"# peer up in {time.monotonic() - t:.1f} s, rxe0 GIDs {self.vm.gids}")

    def hold_vhost(self):
        """qemu waits for a backend on the vhost socket before it runs the guest: a
        droce port holds the link until the peer is up."""
        sock = self.link.vhost_socket
        end = time.monotonic() + SOCKET_SECS
        while not os.path.exists(sock):
            if time.monotonic() > end or self.vm.proc.poll() is not None:
                raise peer_vm.PeerError(f"qemu made no vhost-user socket {sock}")
            time.sleep(0.1)
        self.holder = droce_side.Holder(self.link, self.dropin, self.droce_pmd, sock,
                                        os.path.join(self.out, "vhost-holder.txt"),
                                        BOOT_SECS * 1000)

    def holder_alive(self):
        if not self.holder.running():
            raise peer_vm.PeerError(f"the vhost link's holder (droce-pmd) ended while the "
                                    f"peer booted: {self.holder.output()[-500:].strip()}")

    def save_dmesg(self):
        """The peer's kernel messages (rxe's complaints, if any) beside the cells."""
        try:
            status, dmesg = self.vm.run("dmesg", 20)
        except peer_vm.PeerError:
            return
        with open(os.path.join(self.out, "peer-dmesg.txt"), "w") as f:
            f.write(dmesg)

    def stop_vm(self):
        """End the vhost link's holder and the VM, remove the vhost socket's folder."""
        if self.holder is not None:
            self.holder.kill()
            self.holder = None
        if self.vm is not None:
            self.vm.close()
            self.vm = None
        self.link.close_vhost()

    def stop(self):
        """End the VM and remove the namespace, without asking the peer anything: this
        also runs when the harness broke or a signal came."""
        self.stop_vm()
        self.link.close()

    def hw_counters(self, dev):
        """rxe's counters of @dev, and eth1's received frames as eth1_rx_packets."""
        script = f"cd {HW_COUNTERS.format(dev)} && grep . *"
        if self.vm.vhost is not None:
            script += "; echo eth1_rx_packets:$(cat /sys/class/net/eth1/statistics/rx_packets)"
        status, out = self.vm.run(script, 20)
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

    def peer_listening(self, port, cm=False):
        # an rdma_cm listen is no socket: iproute2's rdma lists the kernel's cm_ids
        probe = (f'/usr/bin/rdma resource show cm_id | grep LISTEN | grep -Eq ":{port}( |$)"' if cm
                 else f'/usr/bin/ss -ltnH "sport = :{port}" | grep -q .')
        script = (f'i=0; until {probe}; do '
                  f'i=$((i + 1)); [ $i -lt {LISTEN_SECS * 10} ] || exit 1; sleep 0.1; done')
        status, _ = self.vm.run(script, LISTEN_SECS + 5)
        return status == 0

    def droce_listening(self, prog, port, cm=False):
        if cm:
            # droce's rdma_listen opens no socket: give its engine time to start
            end = time.monotonic() + CM_LISTEN_SECS
            while time.monotonic() < end and prog.running():
                time.sleep(0.1)
            return prog.running()
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
        ends = Ends(sc.link)
        vhost = sc.link == VHOST
        pcap = os.path.join(cdir, "capture.pcap")
        droce_serves = direction == "droce-server"
        if sc.cm:
            port = sc.cm_port or port
            # rdma_cm: the client names the server's RoCE address, and both the device
            server_ip = ends_ip(sc, ends, droce=droce_serves)
            droce_argv = sc.cm_argv(droce_serves, server_ip, port)
            peer_cmd = " ".join(["exec", *sc.cm_argv(not droce_serves, server_ip, port)])
            client_tail = []
        else:
            droce_argv = sc.argv(droce_side.DEVICE, port, droce=True)
            peer_cmd = " ".join(["exec", *sc.argv(ends.peer_dev, port)])
            client_tail = [L.PEER_IP4]
        if droce_argv[0] == "droce-perf":
            droce_argv[0] = os.path.join(self.build, "app", "droce-perf", "droce-perf")
        if vhost:
            # droce's port records the link: nothing else sees it
            devices = droce_side.vhost_devices(self.link.vhost_socket, pcap)
            link_wait = droce_side.VHOST_LINK_WAIT_MS
        else:
            devices, link_wait = droce_side.devices(sc.loss), 0
        reasons = []
        if sc.loss:
            self.peer_loss(sc.loss)
        before = self.hw_counters(ends.peer_dev)
        tap_before = self.link.tap_dropped()
        cap = None if vhost else capture.Capture(self.link, L.BRIDGE, pcap)
        prog = job = None
        droce_status = peer_status = None
        peer_out = ""
        try:
            if direction == "droce-server":
                prog = droce_side.Program(self.link, self.dropin, droce_argv,
                                          os.path.join(cdir, "droce.txt"), devices, link_wait)
                if not self.droce_listening(prog, port, sc.cm):
                    reasons.append("droce's server never listened")
                else:
                    tail = "" if sc.cm else f" {L.BRIDGE_IP4}"
                    job = self.vm.start(peer_cmd + tail, sc.secs)
                    peer_status, peer_out = self.vm.wait(job, sc.secs + 10)
                droce_status = prog.wait(timeout=15 if job else 1)
            else:
                job = self.vm.start(peer_cmd, sc.secs)
                if not self.peer_listening(port, sc.cm):
                    reasons.append("the peer's server never listened")
                else:
                    prog = droce_side.Program(self.link, self.dropin,
                                              droce_argv + client_tail,
                                              os.path.join(cdir, "droce.txt"), devices,
                                              link_wait)
                    droce_status = prog.wait(timeout=sc.secs)
                peer_status, peer_out = self.vm.wait(job, 15)
        except BaseException:
            # unwinding (the harness broke, or a signal): end what runs here and leave
            # the peer alone, it may be the one that does not answer
            if prog is not None:
                prog.kill()
            if cap is not None:
                cap.stop()
            raise
        if prog is not None:
            prog.kill()
        if job is not None and peer_status is None:
            self.vm.stop(job)
            self.vm.wait(job, 10)
        if cap is not None:
            cap.stop()
        droce_out = prog.output() if prog is not None else ""
        with open(os.path.join(cdir, "peer.txt"), "w") as f:
            f.write(peer_out)
        after = self.hw_counters(ends.peer_dev)
        tap_dropped = 0 if vhost else self.link.tap_dropped() - tap_before
        if sc.loss:
            self.peer_loss(0)

        self.check_end("droce", droce_status, droce_out, sc, reasons,
                       gid_of(sc, ends.peer_ip4, ends.peer_ip6), prog is not None, droce_serves)
        self.check_end("the peer", peer_status, peer_out, sc, reasons,
                       gid_of(sc, ends.droce_ip4, ends.droce_ip6), job is not None,
                       not droce_serves)
        summary = None
        lost = vhost_dropped = None
        if not os.path.exists(pcap):
            reasons.append("no capture")
        else:
            summary = self.check_capture(pcap, sc, ends, reasons, droce_serves)
            if vhost:
                lost = self.check_holes(pcap, sc, ends, reasons)
                # what droce sent (recorded before its device) and eth1 did not receive:
                # its port gives up after a few tries when the guest's ring is full
                if "eth1_rx_packets" in after and "eth1_rx_packets" in before:
                    vhost_dropped = (capture.frames_from(pcap, ends.droce_mac) -
                                     (after["eth1_rx_packets"] - before["eth1_rx_packets"]))
            else:
                lost = cap.dropped()
                if lost:
                    reasons.append(f"the capture lost {lost} frames: its verdict is partial")
        rxe = {k: after[k] - before.get(k, 0) for k in after
               if after[k] != before.get(k, 0) and not k.startswith("eth1_")}
        result = {"scenario": sc.name, "direction": direction, "link": sc.link,
                  "ok": not reasons, "reasons": reasons, "rxe_counters": rxe,
                  "capture_dropped": lost, "tap_dropped": tap_dropped,
                  "vhost_dropped": vhost_dropped,
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
        if sc.cm:
            return  # rping prints no GID: the capture's CM REQ carries both (check_cm)
        gids = sc.remote_gids(output)
        if not gids:
            reasons.append(f"{who} reported no remote GID")
        elif any(g != peer_gid for g in gids):
            reasons.append(f"{who} saw remote GID {gids[0]}, not {peer_gid}")

    def check_holes(self, path, sc, ends, reasons):
        """droce's own capture of the vhost link: a frame its ring had no room for is
        missing, and shows as a PSN skipped (capture.psn_holes), from droce's first
        frame on (what comes before may have waited in the peer's NIC since an earlier
        cell). Returns the number of holes."""
        start = capture.first_from(path, ends.droce_mac)
        holes = capture.psn_holes(self.droce_pcap, path, sc.pmtu, start or 1 << 62)
        if holes:
            src, qpn, want, got = holes[0]
            reasons.append(f"{len(holes)} holes in the capture (the first: {src} to QP "
                           f"{qpn:#x}, PSN {got:#x} after {want:#x} was due): frames "
                           f"missing, the verdict is partial")
        return len(holes)

    def check_capture(self, path, sc, ends, reasons, droce_serves):
        status, summary = capture.verdict(self.droce_pcap, path)
        if summary is None:
            reasons.append(f"droce-pcap could not read the capture (status {status})")
            return None
        bad = summary["malformed"]
        icrc = summary["status"]["icrc_error"]
        if status != 0 or bad != 0:
            reasons.append(f"droce-pcap: {bad} malformed RoCEv2 frames ({icrc} ICRC errors)")
        both = [("droce", ends.droce_ip6 if sc.gid == GID_IP6 else ends.droce_ip4,
                 droce_serves),
                ("the peer", ends.peer_ip6 if sc.gid == GID_IP6 else ends.peer_ip4,
                 not droce_serves)]
        if "atomic" in sc.program:
            for src, psn, values in capture.atomic_replays_differ(self.droce_pcap, path):
                reasons.append(f"{src} answered the atomic of PSN {psn} with different "
                               f"original values {values}")
        senders = {flow["src"] for flow in summary["flows"]}
        if sc.cm:
            self.check_cm(path, sc, ends, reasons, droce_serves)
        if sc.expect_rnr:
            # the receiver (the server of a SEND test) must have sent RNR NAKs: else the
            # scenario proved nothing about either stack's RNR path
            for who, ip, serves in both:
                rnr = sum(f["rnr_naks"] for f in summary["flows"] if f["src"] == ip)
                if serves and rnr == 0:
                    reasons.append(f"{who}, the receiver, sent no RNR NAK")
        for who, ip, serves in both:
            if sc.one_way and serves:
                continue
            if ip not in senders:
                reasons.append(f"no RoCEv2 frame from {who} ({ip}) in the capture")
        return summary

    def check_cm(self, path, sc, ends, reasons, droce_serves):
        """The RDMA CM on the wire: droce-pcap dissects every CM MAD (a malformed one
        fails check_capture). An RC connection (IBTA 12.6, 12.9): the client's REQ
        naming both GIDs, the server's REP, the client's RTU, a DREQ answered by a DREP
        from the other end; UD through SIDR (12.11): a SIDR_REQ answered by a SIDR_REP
        of status 0. No REJ; then traffic from both ends to QPs other than QP1."""
        droce_ip = ends_ip(sc, ends, droce=True)
        peer_ip = ends_ip(sc, ends, droce=False)
        client, server = (peer_ip, droce_ip) if droce_serves else (droce_ip, peer_ip)
        msgs = capture.cm_messages(self.droce_pcap, path)
        sent = [(src, name) for src, name, _ in msgs]
        for src, name, fields in msgs:
            if name == "REJ":
                reasons.append(f"{src} sent a REJ (reason {fields.get('rej_reason')})")
        if sc.sidr:
            self.check_sidr(msgs, client, server, reasons)
        else:
            self.check_connection(msgs, sc, ends, client, server, droce_serves, reasons)
        missing = {droce_ip, peer_ip} - capture.rc_senders(self.droce_pcap, path)
        for ip in sorted(missing):
            reasons.append(f"no frame from {ip} to a QP other than QP1")

    @staticmethod
    def check_sidr(msgs, client, server, reasons):
        if not any(src == client and name == "SIDR_REQ" for src, name, _ in msgs):
            reasons.append(f"no CM SIDR_REQ from {client} in the capture")
        reps = [f for src, name, f in msgs if src == server and name == "SIDR_REP"]
        if not reps:
            reasons.append(f"no CM SIDR_REP from {server} in the capture")
        elif reps[0].get("status") != 0:
            reasons.append(f"{server}'s SIDR_REP has status {reps[0].get('status')}")

    @staticmethod
    def check_connection(msgs, sc, ends, client, server, droce_serves, reasons):
        sent = [(src, name) for src, name, _ in msgs]
        for src, name in ((client, "REQ"), (server, "REP"), (client, "RTU")):
            if (src, name) not in sent:
                reasons.append(f"no CM {name} from {src} in the capture")
        dreq = [src for src, name in sent if name == "DREQ"]
        if not dreq:
            reasons.append("no CM DREQ in the capture")
        elif not any(src != dreq[0] and name == "DREP" for src, name in sent):
            reasons.append(f"no CM DREP answered {dreq[0]}'s DREQ")
        droce_gid = gid_of(sc, ends.droce_ip4, ends.droce_ip6)
        peer_gid = gid_of(sc, ends.peer_ip4, ends.peer_ip6)
        client_gid, server_gid = (peer_gid, droce_gid) if droce_serves else (droce_gid, peer_gid)
        req = next((f for src, name, f in msgs if src == client and name == "REQ"), None)
        if req is not None:
            for field, gid in (("primary_local_gid", client_gid),
                               ("primary_remote_gid", server_gid)):
                if ipaddress.IPv6Address(req.get(field, "::")) != gid:
                    reasons.append(f"the REQ's {field} is {req.get(field)}, not {gid}")

    def run(self, cells):
        say(f"1..{len(cells)}")
        broken = None
        for n, (sc, direction) in enumerate(cells, 1):
            name = f"{sc.name} {direction}"
            r = {"scenario": sc.name, "direction": direction, "ok": False}
            if broken:
                r["reasons"] = [f"not run: {broken}"]
            elif sc.link == VHOST and self.vhost_broken:
                r["reasons"] = [f"not run: the vhost link did not come up ({self.vhost_broken})"]
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
    ap.add_argument("--budget", type=int, default=360,
                    help="seconds after which the cells left are not run (default 360)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out or os.path.join(build, "interop"))

    cells = selected({x for x in args.only.split(",") if x})
    vhost = any(sc.link == VHOST for sc, _ in cells)
    preflight(build, vhost)
    image = build_image(build)
    lock = take_lock()
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    # meson stops a test with SIGTERM: unwind so that the VM and the namespace go
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, interrupted)
    suite = Suite(build, out, image, args.budget)
    try:
        suite.start(vhost)
        suite.run(cells)
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
