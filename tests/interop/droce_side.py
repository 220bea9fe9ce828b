"""droce's side of the links: an unmodified program run inside the link's
namespace on droce's drop-in libibverbs.so.1, whose embedded engine opens
droce's port: the veth through DPDK's af_packet PMD on the bridge link, the
vhost-user socket through DPDK's vhost PMD on the vhost link. Each program's
EAL runtime folder is removed after it, also when it had to be killed."""

import os
import shutil
import signal
import subprocess

import link as L

DEVICE = "droce0"
# perftest refuses a port that is not ACTIVE right after opening it: on the vhost
# link droce's port is up once qemu has handed it the peer's rings
VHOST_LINK_WAIT_MS = 10000


def devices(loss=0.0, seed=1):
    """DROCE_DEVICES for droce's port on the bridge link; @loss drops that share of
    the RoCEv2 frames it sends."""
    vdev = f"net_af_packet0+iface={L.VETH_DROCE}"
    fault = f",fault=drop:{loss}+match:roce+seed:{seed}" if loss else ""
    return (f"{DEVICE}:mac={L.DROCE_MAC},ip={L.DROCE_IP4},ip={L.DROCE_IP6},mtu={L.MTU},"
            f"vdev={vdev}{fault}")


def vhost_devices(socket, capture=None):
    """DROCE_DEVICES for droce's port on the vhost link (it connects to qemu's
    socket); @capture: where the port records every frame it sends and receives
    (the link has no kernel interface a tcpdump could listen on)."""
    vdev = f"net_vhost0+iface={socket}+client=1"
    cap = f",capture={capture}" if capture else ""
    return (f"{DEVICE}:mac={L.VHOST_DROCE_MAC},ip={L.VHOST_DROCE_IP4},"
            f"ip={L.VHOST_DROCE_IP6},mtu={L.VHOST_MTU},vdev={vdev}{cap}")


class Program:
    """One program on droce, started at once; its output goes to @log_path."""

    def __init__(self, link, dropin_dir, argv, log_path, devices, link_wait_ms=0, stdin=None):
        # plain pages for droce's engine: programs of cells side by side (and other tests)
        # do not race for the machine's hugepages between the check and the EAL's start
        env = dict(os.environ, LD_LIBRARY_PATH=dropin_dir, DROCE_DEVICES=devices,
                   DROCE_NO_HUGE="1")
        if link_wait_ms:
            env["DROCE_LINK_WAIT_MS"] = str(link_wait_ms)
        self.log_path = log_path
        self.log = open(log_path, "wb")
        # `ip netns exec` execs the program: its pid names the EAL's file prefix
        self.proc = subprocess.Popen(link.argv(argv), env=env,
                                     stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.finished = False

    def running(self):
        return self.proc.poll() is None

    def wait(self, timeout):
        """Exit status, or None when it had to be killed after @timeout seconds."""
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = None
        self.kill()
        return status

    def kill(self):
        """End it now (if it still runs) and clean up after it."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._finish()

    def _finish(self):
        if self.finished:
            return
        self.finished = True
        self.log.close()
        # lib/engine names its EAL file prefix droce-<pid> and removes the folder at exit,
        # which a killed program cannot; hugepage files are unlinked at start
        shutil.rmtree(f"/var/run/dpdk/droce-{self.proc.pid}", ignore_errors=True)

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


class Holder(Program):
    """droce's port on the vhost link while the peer boots: qemu runs no guest before
    a vhost-user backend has connected to its socket. droce-pmd with its input on a
    pipe opens the device, waits for commands and ends cleanly when the pipe closes;
    the socket is then free for the programs of the cells. The port comes up only
    once the guest's driver has started the NIC, late in the boot: droce-pmd gives
    up on a port not ACTIVE within 10 s of opening it, so the opening waits for the
    link (@link_wait_ms) first."""

    def __init__(self, link, dropin_dir, droce_pmd, socket, log_path, link_wait_ms):
        super().__init__(link, dropin_dir, [droce_pmd, "-q"], log_path, vhost_devices(socket),
                         link_wait_ms, stdin=subprocess.PIPE)

    def stop(self):
        """Close its input and let it end (killed after 20 s); its exit status."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        return self.wait(timeout=20)
