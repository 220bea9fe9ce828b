"""The interop matrix: Debian's unmodified ibv_*_pingpong, perftest, rping and udaddy
on droce (through the drop-ins) against the same programs on Linux Soft-RoCE, each
scenario in both directions. Counts stay small: the peer runs under TCG. On the
bridge link both ends' active MTU is 1024 (Ethernet MTU 1500: DPDK 22.11's
af_packet PMD refuses larger frames), so -s 4096 -m 1024 sends 4-packet
messages; the scenarios on the vhost link run at path MTU 4096 or 2048
(Ethernet MTU 4200, droce0 against rxe1)."""

import ipaddress
import re
from dataclasses import dataclass

# GID indexes, the same on both stacks: 0 the IPv6 link-local GID, 1 the
# IPv4-mapped one, 2 the configured IPv6 address (doc/verbs.md; rxe orders its
# table the same way)
GID_IP4, GID_IP6 = 1, 2

# the links (link.py): droce's af_packet port and the peer's eth0 (rxe0) on a bridge at
# MTU 1500, or droce's vhost port and the peer's eth1 (rxe1) at MTU 4200
BRIDGE, VHOST = "bridge", "vhost"


@dataclass
class Scenario:
    name: str
    program: str
    args: list
    iters: int
    what: str
    gid: int = GID_IP4
    size: int = 0  # perftest: the message size its result line reports
    secs: int = 60  # bound for each end
    quiet_server: bool = False  # the server reports no results (perftest's READ latency)
    one_way: bool = False  # only the client sends RoCEv2 frames (UC and UD bandwidth)
    loss: float = 0.0  # share of RoCEv2 frames each end's transmit path drops
    droce_program: str = ""  # what droce's end runs instead of @program (droce-perf)
    expect_rnr: bool = False  # the receiver must send RNR NAKs (the capture shows them)
    link: str = BRIDGE  # the link the cell runs on
    pmtu: int = 1024  # the path MTU (READ requests take a PSN per response packet of it)
    cm: bool = False  # connected through the RDMA CM (rping): no out-of-band TCP, no GID printed
    cm_port: int = 0  # the rdma_cm port the program always takes (udaddy's 7174); 0: the cell's

    @property
    def perftest(self):
        return self.program.startswith("ib_")

    @property
    def sidr(self):
        """UD through SIDR (udaddy) rather than an RC connection (rping)."""
        return self.program == "udaddy"

    def cm_argv(self, serves, address, port):
        """The command line of an rdma_cm program: the server binds @address (its own),
        the client connects to it (the server's); rdma_cm picks the device from the
        address. udaddy has a port of its own."""
        if self.sidr:
            return [self.program, "-b" if serves else "-s", address, "-C", str(self.iters),
                    *self.args]
        return [self.program, "-s" if serves else "-c", "-a", address, "-p", str(port),
                "-C", str(self.iters), *self.args]

    def argv(self, device, port, droce=False):
        gid_opt = "-x" if self.perftest else "-g"
        quiet = ["-F"] if self.perftest else []  # no CPU-frequency warning
        if droce and self.droce_program:
            # droce-perf takes perftest's options; its test is its first argument
            head = [self.droce_program, self.program[len("ib_"):]]
        else:
            head = [self.program]
        return [*head, "-d", device, gid_opt, str(self.gid), "-p", str(port),
                "-n", str(self.iters), *quiet, *self.args]

    def finished(self, output):
        """Whether @output shows every iteration done."""
        if self.perftest:
            return re.search(rf"^\s*{self.size}\s+{self.iters}\s", output, re.M) is not None
        if self.sidr:
            # udaddy waits for every message's completion before it says so
            return "data transfers complete" in output and "test complete" in output
        if self.cm:
            # rping -v prints each ping's data: "ping data: rdma-ping-N: ...", N from 0
            pings = set(re.findall(r"ping data: rdma-ping-(\d+): ", output))
            return pings == {str(n) for n in range(self.iters)}
        return re.search(rf"\b{self.iters} iters in", output) is not None

    def remote_gids(self, output):
        """The peer GIDs an end reports, as addresses."""
        if self.perftest:
            # " GID: 00:00:...:255:255:10:99:00:02", decimal bytes, after "remote address"
            found = re.findall(r"remote address:.*\n\s*GID: ([0-9:]+)", output)
            return [ipaddress.IPv6Address(bytes(int(b) for b in g.split(":"))) for g in found]
        return [ipaddress.IPv6Address(g) for g in
                re.findall(r"remote address:.*GID (\S+)", output)]


def rping(name, count, what, **kw):
    return Scenario(name, "rping", ["-v"], count, what, cm=True, **kw)


def pingpong(name, program, args, iters, what, **kw):
    return Scenario(name, f"ibv_{program}_pingpong", args, iters, what, **kw)


def perftest(name, program, size, iters, what, args=(), **kw):
    return Scenario(name, f"ib_{program}", ["-s", str(size), *args], iters, what, size=size,
                    **kw)


SCENARIOS = [
    pingpong("rc", "rc", ["-s", "4096", "-m", "1024", "-c"], 20,
             "RC SEND, 4 KiB over a 1 KiB path MTU (FIRST/MIDDLE/LAST)"),
    pingpong("rc_pad", "rc", ["-s", "4999", "-m", "1024", "-c"], 10,
             "RC SEND of 4999 bytes: 5 packets, the last padded"),
    pingpong("rc_small", "rc", ["-s", "1", "-m", "1024", "-c"], 20,
             "RC SEND_ONLY of 1 byte (3 pad bytes)"),
    pingpong("rc_mtu256", "rc", ["-s", "4096", "-m", "256", "-c"], 10,
             "RC SEND, 4 KiB over a 256-byte path MTU (16 packets)"),
    pingpong("rc_events", "rc", ["-s", "4096", "-m", "1024", "-e", "-c"], 20,
             "RC, completions through a completion channel (-e)"),
    pingpong("rc_ipv6", "rc", ["-s", "4096", "-m", "1024", "-c"], 20,
             "RC over RoCEv2/IPv6 (GID index 2)", gid=GID_IP6),
    pingpong("uc", "uc", ["-s", "4096", "-m", "1024", "-c"], 20,
             "UC SEND, 4 KiB over a 1 KiB path MTU"),
    pingpong("ud", "ud", ["-s", "1024", "-c"], 20,
             "UD SEND of a whole MTU (1024 bytes) with GRH"),
    pingpong("srq", "srq", ["-q", "4", "-s", "4096", "-m", "1024", "-c"], 10,
             "RC, 4 QPs whose receives come from one SRQ"),
    perftest("write_bw", "write_bw", 65536, 200,
             "RC RDMA WRITE, 64 KiB messages, 128 outstanding (perftest)"),
    perftest("read_bw", "read_bw", 16384, 200,
             "RC RDMA READ, 16 KiB (16-packet responses), outstanding READs (perftest)"),
    perftest("send_bw", "send_bw", 4096, 200, "RC SEND bandwidth, 4 KiB (perftest)"),
    perftest("atomic_bw", "atomic_bw", 8, 200, "RC FETCH_AND_ADD (perftest)"),
    perftest("atomic_cs", "atomic_bw", 8, 200, "RC CMP_AND_SWP (perftest)",
             ["-A", "CMP_AND_SWAP"]),
    perftest("write_lat", "write_lat", 64, 200,
             "RC RDMA WRITE ping-pong, inline (perftest)"),
    perftest("read_lat", "read_lat", 64, 200, "RC RDMA READ latency (perftest)",
             quiet_server=True),
    perftest("uc_write_bw", "write_bw", 4096, 200, "UC RDMA WRITE (perftest)",
             ["-c", "UC"], one_way=True),
    perftest("ud_send_bw", "send_bw", 1024, 200, "UD SEND bandwidth (perftest)",
             ["-c", "UD"], one_way=True),
]

# Both ends lose RoCEv2 frames they send (droce through its fault injector,
# the peer through netem): each side's retransmissions and NAKs meet the other's.
# perftest, not the ping-pongs: a ping-pong end exits once its own counts are
# done, so when the ACK of the other end's last message is lost, that end
# retries against a QP that is gone and fails (retry exceeded) whatever the
# stacks do; perftest ends with a TCP handshake after both are done.
SCENARIOS += [
    perftest("send_bw_lossy", "send_bw", 4096, 200,
             "RC SEND, 4 KiB, 5 % of the frames lost each way (perftest)", loss=0.05),
    perftest("write_bw_lossy", "write_bw", 65536, 100,
             "RC RDMA WRITE, 3 % of the frames lost each way (perftest)", loss=0.03),
    perftest("read_bw_lossy", "read_bw", 16384, 100,
             "RC RDMA READ, 3 % of the frames lost each way (perftest)", loss=0.03),
    perftest("atomic_bw_lossy", "atomic_bw", 8, 200,
             "RC FETCH_AND_ADD, 5 % lost each way: duplicates answered from the "
             "responder's saved results (perftest)", loss=0.05),
]

# A receiver that keeps a single receive posted: the sender meets RNR NAKs and recovers
# (min_rnr_timer, rnr_retry 7 from perftest) - both stacks' RNR paths, both directions
SCENARIOS += [
    perftest("send_bw_rnr", "send_bw", 4096, 200,
             "RC SEND to a receiver with one receive posted at a time: RNR NAKs, recovery "
             "(perftest -r 1)", ["-r", "1"], expect_rnr=True),
]

# droce's own droce-perf (app/droce-perf) against the peer's unmodified perftest 4.5:
# the out-of-band exchange and the traffic both have to be perftest's
SCENARIOS += [
    perftest("perf_write_bw", "write_bw", 65536, 200,
             "droce-perf write_bw against ib_write_bw, 64 KiB", droce_program="droce-perf"),
    perftest("perf_read_bw", "read_bw", 16384, 200,
             "droce-perf read_bw against ib_read_bw, 16 KiB", droce_program="droce-perf"),
    perftest("perf_send_bw", "send_bw", 4096, 200,
             "droce-perf send_bw against ib_send_bw, 4 KiB", droce_program="droce-perf"),
    perftest("send_bw_bidir", "send_bw", 4096, 200,
             "RC SEND both ways at once, 4 KiB (perftest -b)", ["-b"]),
    perftest("perf_send_bw_bidir", "send_bw", 4096, 200,
             "droce-perf send_bw -b against ib_send_bw -b, 4 KiB", ["-b"],
             droce_program="droce-perf"),
    perftest("perf_send_bw_srq_events", "send_bw", 4096, 200,
             "droce-perf --use-srq -e against ib_send_bw --use-srq -e, 4 KiB",
             ["--use-srq", "-e"], droce_program="droce-perf"),
    perftest("perf_atomic_bw", "atomic_bw", 8, 200,
             "droce-perf atomic_bw against ib_atomic_bw (FETCH_AND_ADD)",
             droce_program="droce-perf"),
    perftest("perf_write_lat", "write_lat", 64, 200,
             "droce-perf write_lat against ib_write_lat, inline", droce_program="droce-perf"),
]

# Path MTUs 4096 and 2048 over the vhost link: droce's port on DPDK's vhost PMD, the
# peer's eth1 and rxe1, Ethernet MTU 4200 on both; both GID families. Counts and windows stay
# small: the frames are four times larger and the peer under TCG no faster.
SCENARIOS += [
    pingpong("rc_4096", "rc", ["-s", "16384", "-m", "4096", "-c"], 20,
             "RC SEND, 16 KiB over a 4 KiB path MTU (FIRST/MIDDLE/LAST)", link=VHOST,
             pmtu=4096),
    pingpong("rc_2048", "rc", ["-s", "8192", "-m", "2048", "-c"], 20,
             "RC SEND, 8 KiB over a 2 KiB path MTU", link=VHOST, pmtu=2048),
    pingpong("rc_4096_ipv6", "rc", ["-s", "4096", "-m", "4096", "-c"], 20,
             "RC SEND_ONLY of a whole 4 KiB MTU over RoCEv2/IPv6 (GID index 2)",
             gid=GID_IP6, link=VHOST, pmtu=4096),
    pingpong("ud_4096", "ud", ["-s", "4096", "-c"], 20,
             "UD SEND of a whole MTU (4096 bytes) with GRH", link=VHOST, pmtu=4096),
    perftest("write_bw_4096", "write_bw", 65536, 100,
             "RC RDMA WRITE, 64 KiB over a 4 KiB path MTU (perftest)",
             ["-m", "4096"], link=VHOST, pmtu=4096),
    perftest("send_bw_4096", "send_bw", 16384, 100,
             "RC SEND bandwidth, 16 KiB over a 4 KiB path MTU (perftest)", ["-m", "4096"],
             link=VHOST, pmtu=4096),
    perftest("read_bw_4096", "read_bw", 65536, 100,
             "RC RDMA READ, 64 KiB: 16-packet responses of 4 KiB (perftest)", ["-m", "4096"],
             link=VHOST, pmtu=4096),
    perftest("perf_write_bw_4096", "write_bw", 65536, 100,
             "droce-perf write_bw against ib_write_bw, 64 KiB over a 4 KiB path MTU",
             ["-m", "4096"], droce_program="droce-perf", link=VHOST, pmtu=4096),
    perftest("perf_send_bw_4096", "send_bw", 16384, 100,
             "droce-perf send_bw against ib_send_bw, 16 KiB over a 4 KiB path MTU",
             ["-m", "4096"], droce_program="droce-perf", link=VHOST, pmtu=4096),
]

# Debian's unmodified rping: the connection through the RDMA CM on both stacks (droce's
# librdmacm drop-in and CM agent against Linux's rdma_cm and ib_cm): REQ, REP, RTU, then
# RDMA READ, WRITE and SEND on the RC QP, DREQ and DREP at the end
SCENARIOS += [
    rping("rping", 10, "rping -C 10 through the RDMA CM (REQ/REP/RTU, DREQ/DREP), RC READ, "
          "WRITE and SEND"),
    rping("rping_ipv6", 10, "rping -C 10 through the RDMA CM over RoCEv2/IPv6", gid=GID_IP6),
    Scenario("udaddy", "udaddy", [], 10, "udaddy -C 10: UD through SIDR (SIDR_REQ/SIDR_REP), "
             "10 UD SENDs each way", cm=True, cm_port=7174),
    Scenario("udaddy_ipv6", "udaddy", [], 10, "udaddy -C 10 through SIDR over RoCEv2/IPv6",
             gid=GID_IP6, cm=True, cm_port=7174),
]

# droce as server (the peer connects to the bridge's address, where droce's
# process listens) and droce as client
DIRECTIONS = ["droce-server", "droce-client"]
