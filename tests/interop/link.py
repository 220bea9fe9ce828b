"""The links of the interop suite.

The bridge link: a network namespace of its own holding a bridge, the peer VM's
tap and a veth pair whose far end droce's DPDK port opens through the af_packet
PMD, all at Ethernet MTU 1500. The bridge's kernel address carries the
out-of-band TCP exchange of the programs (on both links); the peer and droce
have addresses of their own. Nothing leaves the namespace.

The vhost link, for path MTU 4096: a vhost-user socket in a private folder,
served by qemu (the peer's second NIC, eth1) and opened by droce's port through
DPDK's vhost PMD, at Ethernet MTU 4200. It joins the two processes' memory and
no kernel interface, so nothing can leave it either.

close() removes the namespace and the socket's folder whatever happened."""

import os
import shutil
import subprocess
import tempfile

# Addresses inside the namespace (never routed anywhere else).
BRIDGE_IP4, BRIDGE_IP6 = "10.99.0.254", "fd00::fe"
PEER_IP4, PEER_IP6, PEER_MAC = "10.99.0.2", "fd00::2", "52:54:00:d0:0c:02"
DROCE_IP4, DROCE_IP6, DROCE_MAC = "10.99.0.1", "fd00::1", "02:d0:0c:00:00:01"
PREFIX4, PREFIX6 = 24, 64
MTU = 1500

BRIDGE, TAP, VETH_BRIDGE, VETH_DROCE = "br0", "peer0", "vbr0", "vdroce0"

# The vhost link: its own subnet, so that each end's routes and neighbours pick the
# right interface (the peer's eth1, rxe1 on it)
VHOST_PEER_IP4, VHOST_PEER_IP6, VHOST_PEER_MAC = "10.99.1.2", "fd01::2", "52:54:00:d0:0c:12"
VHOST_DROCE_IP4, VHOST_DROCE_IP6, VHOST_DROCE_MAC = "10.99.1.1", "fd01::1", "02:d0:0c:00:00:11"
# 4096 bytes of payload and the largest RoCEv2 headers (IPv6, UDP, BTH, RETH, ICRC)
VHOST_MTU = 4200


class LinkError(Exception):
    pass


class Link:
    def __init__(self, name=None):
        self.ns = name or f"droce-interop-{os.getpid()}"
        self.made = False
        self.vhost_dir = None

    @property
    def vhost_socket(self):
        """The vhost-user socket (qemu listens, droce's port connects), None if not made."""
        return os.path.join(self.vhost_dir, "vhost.sock") if self.vhost_dir else None

    def open_vhost(self):
        """A private folder for the vhost link's socket (a UNIX socket path is short:
        not under the build folder)."""
        self.vhost_dir = tempfile.mkdtemp(prefix="droce-interop-vhost-")

    def ip(self, *args, check=True):
        """`ip` inside the namespace."""
        return self.run(["ip", *args], check=check)

    def run(self, argv, check=True, timeout=30):
        p = subprocess.run(["ip", "netns", "exec", self.ns, *argv], capture_output=True,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise LinkError(f"{' '.join(argv)}: {p.stderr.strip()}")
        return p

    def argv(self, argv):
        """A command line that runs @argv inside the namespace (exec'd: same pid)."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def sysctl(self, key, value):
        self.run(["sysctl", "-q", "-w", f"{key}={value}"])

    def open(self):
        p = subprocess.run(["ip", "netns", "add", self.ns], capture_output=True, text=True)
        if p.returncode != 0:
            raise LinkError(f"ip netns add {self.ns}: {p.stderr.strip()}")
        self.made = True
        self.ip("link", "set", "lo", "up")
        self.ip("link", "add", BRIDGE, "type", "bridge")
        # the namespace's own TCP (the out-of-band exchange) in frames of the MTU, as a
        # NIC puts them on the wire: the capture then holds no 64 KiB GSO frames
        self.ip("link", "set", BRIDGE, "mtu", str(MTU), "gso_max_segs", "1", "up")
        self.ip("addr", "add", f"{BRIDGE_IP4}/{PREFIX4}", "dev", BRIDGE)
        self.ip("-6", "addr", "add", f"{BRIDGE_IP6}/{PREFIX6}", "dev", BRIDGE, "nodad")
        self.ip("tuntap", "add", "dev", TAP, "mode", "tap")
        self.ip("link", "set", TAP, "master", BRIDGE, "mtu", str(MTU), "up")
        self.ip("link", "add", VETH_DROCE, "type", "veth", "peer", "name", VETH_BRIDGE)
        self.ip("link", "set", VETH_BRIDGE, "master", BRIDGE, "mtu", str(MTU), "up")
        # droce's end belongs to droce alone: the namespace's kernel must neither
        # answer ARP/ND on it nor give it an IPv6 address of its own
        self.sysctl(f"net.ipv6.conf.{VETH_DROCE}.disable_ipv6", 1)
        self.ip("link", "set", VETH_DROCE, "arp", "off", "mtu", str(MTU), "up")

    def listening(self, port):
        """Whether a TCP socket listens on @port in the namespace."""
        p = self.run(["ss", "-ltnH", f"sport = :{port}"], check=False)
        return p.returncode == 0 and p.stdout.strip() != ""

    def tap_dropped(self):
        """Frames the peer's tap dropped on their way into the VM (its queue was full)."""
        p = self.run(["cat", f"/sys/class/net/{TAP}/statistics/tx_dropped"], check=False)
        return int(p.stdout) if p.returncode == 0 and p.stdout.strip().isdigit() else 0

    def close(self):
        if self.made:
            subprocess.run(["ip", "netns", "delete", self.ns], capture_output=True)
            self.made = False
        self.close_vhost()

    def close_vhost(self):
        if self.vhost_dir is not None:
            shutil.rmtree(self.vhost_dir, ignore_errors=True)
            self.vhost_dir = None
