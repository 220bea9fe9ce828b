"""The interop matrix: Debian's unmodified ibv_*_pingpong on droce (through the
drop-in) against the same programs on Linux Soft-RoCE, each scenario in both
directions. Iteration counts stay small: under TCG a peer iteration costs about
20 ms. Both ends' active MTU is 1024 (Ethernet MTU 1500: DPDK 22.11's af_packet
PMD refuses larger frames), so -s 4096 -m 1024 sends 4-packet messages."""

from dataclasses import dataclass, field

# GID indexes, the same on both stacks: 0 the IPv6 link-local GID, 1 the
# IPv4-mapped one, 2 the configured IPv6 address (doc/verbs.md; rxe orders its
# table the same way)
GID_IP4, GID_IP6 = 1, 2


@dataclass
class Scenario:
    name: str
    program: str
    args: list
    iters: int
    gid: int = GID_IP4
    what: str = ""
    secs: int = 60  # bound for each end
    tags: list = field(default_factory=list)


SCENARIOS = [
    Scenario("rc", "ibv_rc_pingpong", ["-s", "4096", "-m", "1024", "-c"], 20,
             what="RC SEND, 4 KiB over a 1 KiB path MTU (FIRST/MIDDLE/LAST)"),
    Scenario("rc_pad", "ibv_rc_pingpong", ["-s", "4999", "-m", "1024", "-c"], 10,
             what="RC SEND of 4999 bytes: 5 packets, the last padded"),
    Scenario("rc_small", "ibv_rc_pingpong", ["-s", "1", "-m", "1024", "-c"], 20,
             what="RC SEND_ONLY of 1 byte (3 pad bytes)"),
    Scenario("rc_mtu256", "ibv_rc_pingpong", ["-s", "4096", "-m", "256", "-c"], 10,
             what="RC SEND, 4 KiB over a 256-byte path MTU (16 packets)"),
    Scenario("rc_events", "ibv_rc_pingpong", ["-s", "4096", "-m", "1024", "-e", "-c"], 20,
             what="RC, completions through a completion channel (-e)"),
    Scenario("rc_ipv6", "ibv_rc_pingpong", ["-s", "4096", "-m", "1024", "-c"], 20,
             gid=GID_IP6, what="RC over RoCEv2/IPv6 (GID index 2)"),
    Scenario("uc", "ibv_uc_pingpong", ["-s", "4096", "-m", "1024", "-c"], 20,
             what="UC SEND, 4 KiB over a 1 KiB path MTU"),
    Scenario("ud", "ibv_ud_pingpong", ["-s", "1024", "-c"], 20,
             what="UD SEND of a whole MTU (1024 bytes) with GRH"),
    Scenario("srq", "ibv_srq_pingpong", ["-q", "4", "-s", "4096", "-m", "1024", "-c"], 10,
             what="RC, 4 QPs whose receives come from one SRQ"),
]

# droce as server (the peer connects to the bridge's address, which the
# namespace's kernel answers for droce's process) and droce as client
DIRECTIONS = ["droce-server", "droce-client"]
