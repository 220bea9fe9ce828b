"""The Linux Soft-RoCE peer: Debian's kernel and the initramfs of
tools/peer/build-image.sh under qemu (TCG: these machines' CPUs give KVM no
vmx), its NIC on the link's tap, its serial console on pipes. One boot serves a
whole suite: commands go to tools/peer/agent, which answers in framed, base64
replies (the protocol is described there).

With a VhostNic the peer has a second NIC, eth1 (rxe1 on it), on a vhost-user
socket that qemu serves: its memory is then a shared memfd, which the vhost-user
backend (droce's port) maps."""

import base64
import queue
import re
import subprocess
import threading
import time
from dataclasses import dataclass


# a line of the agent's base64 output (anything else on the console is not)
BASE64_LINE = re.compile(r"^[A-Za-z0-9+/=]+\s*$")


class PeerError(Exception):
    pass


@dataclass
class VhostNic:
    """The peer's second NIC, on a vhost-user socket qemu serves."""
    socket: str
    mac: str
    ip4: str
    ip6: str
    prefix4: int
    prefix6: int
    mtu: int


MEMORY_MB = 512


class PeerVM:
    def __init__(self, image_dir, link, tap, mac, ip4, ip6, prefix4, prefix6, mtu, console_log,
                 vhost=None):
        self.image_dir = image_dir
        self.link = link
        self.tap = tap
        self.mac = mac
        self.vhost = vhost
        self.cmdline = (f"console=ttyS0 quiet loglevel=1 panic=-1 peer_ip={ip4}/{prefix4} "
                        f"peer_ip6={ip6}/{prefix6} peer_mtu={mtu}")
        if vhost is not None:
            self.cmdline += (f" eth1_ip={vhost.ip4}/{vhost.prefix4} "
                             f"eth1_ip6={vhost.ip6}/{vhost.prefix6} eth1_mtu={vhost.mtu}")
        self.console_log = console_log
        self.proc = None
        self.lines = queue.Queue()
        self.jobs = 0
        self.gids = ""

    def _vhost_argv(self):
        v = self.vhost
        return [
            # a vhost-user backend maps the guest's memory: it must be a shared file
            "-object", f"memory-backend-memfd,id=mem,size={MEMORY_MB}M,share=on",
            "-numa", "node,memdev=mem",
            # qemu listens; each program on droce connects (client=1) and goes again
            "-chardev", f"socket,id=vhost,path={v.socket},server=on,wait=off",
            "-netdev", "vhost-user,id=net1,chardev=vhost",
            # host_mtu: the guest takes the MTU (VIRTIO_NET_F_MTU). vectors=0: with
            # MSI-X, qemu 7.2 under TCG crashes (SIGSEGV in msix_set_vector_notifiers,
            # from vhost_net_start) when the guest starts the device. status=off: no
            # link status for the guest, so eth1 and rxe1 stay up while no program on
            # droce holds the socket (qemu marks the link down then)
            "-device", f"virtio-net-pci,netdev=net1,mac={v.mac},host_mtu={v.mtu},vectors=0,"
                       "status=off,csum=off,guest_csum=off",
        ]

    def launch(self):
        """Start qemu. With a vhost NIC it does not run the guest before a backend
        has connected to the socket (droce_side.Holder)."""
        argv = [
            "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max",
            "-m", str(MEMORY_MB),
            "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-chardev", "stdio,id=console,signal=off", "-serial", "chardev:console",
            "-kernel", f"{self.image_dir}/vmlinuz", "-initrd", f"{self.image_dir}/initrd.gz",
            "-append", self.cmdline,
            "-netdev", f"tap,id=net0,ifname={self.tap},script=no,downscript=no",
            # checksums in the guest: what reaches the wire is complete, as from a NIC
            "-device", f"virtio-net-pci,netdev=net0,mac={self.mac},csum=off,guest_csum=off",
        ]
        if self.vhost is not None:
            argv += self._vhost_argv()
        self.proc = subprocess.Popen(self.link.argv(argv), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read_console, daemon=True).start()

    def wait_ready(self, timeout, alive=None):
        """Wait for the peer's init to say it is ready; @alive (if given) is called
        every second and raises PeerError when what the boot needs has gone."""
        line = self._expect(("@@ready", "@@peer-failed"), timeout, "the peer's boot", alive)
        if line.startswith("@@peer-failed"):
            raise PeerError(f"the peer did not come up: {line[len('@@peer-failed '):]}")
        self.gids = line[len("@@ready "):].strip()

    def _read_console(self):
        with open(self.console_log, "ab") as log:
            for raw in self.proc.stdout:
                log.write(raw)
                log.flush()
                self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def _expect(self, prefixes, timeout, what, alive=None):
        """The next console line that starts with one of @prefixes."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerError(f"no answer from the peer within {timeout} s ({what})")
            try:
                line = self.lines.get(timeout=min(left, 1.0) if alive else left)
            except queue.Empty:
                if alive:
                    alive()
                continue
            if line is None:
                raise PeerError(f"the peer's console closed ({what}); qemu exit "
                                f"{self.proc.poll()}")
            if line.startswith(prefixes):
                return line

    def _send(self, verb, job, secs, script=None):
        words = [verb, job, str(int(secs))]
        if script is not None:
            words.append(base64.b64encode(script.encode()).decode())
        try:
            self.proc.stdin.write((" ".join(words) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise PeerError(f"the peer's console is gone: {e}")

    def start(self, script, secs):
        """Start @script (sh) in the peer, killed after @secs; returns the job's id."""
        self.jobs += 1
        job = f"j{self.jobs}"
        self._send("start", job, secs, script)
        line = self._expect((f"@@started {job}", f"@@error {job}"), 30, f"start {job}")
        if line.startswith("@@error"):
            raise PeerError(line)
        return job

    def wait(self, job, secs):
        """Wait up to @secs for @job: (exit status or None if it hung, its output)."""
        self._send("wait", job, secs)
        self._expect((f"@@begin {job}", f"@@error {job}"), secs + 30, f"wait {job}")
        chunks = []
        while True:
            line = self._expect(("",), 60, f"output of {job}")
            if line.startswith(f"@@end {job} "):
                status = line.split()[2]
                break
            if BASE64_LINE.match(line):
                chunks.append(line.strip())
        try:
            out = base64.b64decode("".join(chunks)).decode("utf-8", "replace")
        except ValueError as e:
            raise PeerError(f"garbled output of {job}: {e}")
        return (None if status == "hung" else int(status)), out

    def stop(self, job):
        """Kill @job now (its script should exec its program)."""
        self._send("stop", job, 0)
        self._expect((f"@@stopped {job}", f"@@error {job}"), 30, f"stop {job}")

    def run(self, script, secs):
        return self.wait(self.start(script, secs), secs + 5)

    def close(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None
