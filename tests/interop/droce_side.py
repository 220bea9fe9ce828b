"""droce's side of the link: an unmodified program run inside the link's
namespace on droce's drop-in libibverbs.so.1, whose embedded engine opens the
veth through DPDK's af_packet PMD. Each program's EAL runtime folder is removed
after it, also when it had to be killed."""

import os
import shutil
import signal
import subprocess

import link as L

DEVICE = "droce0"


def devices(loss=0.0, seed=1):
    """DROCE_DEVICES for droce's port; @loss drops that share of the RoCEv2 frames it sends."""
    vdev = f"net_af_packet0+iface={L.VETH_DROCE}"
    fault = f",fault=drop:{loss}+match:roce+seed:{seed}" if loss else ""
    return (f"{DEVICE}:mac={L.DROCE_MAC},ip={L.DROCE_IP4},ip={L.DROCE_IP6},mtu={L.MTU},"
            f"vdev={vdev}{fault}")


class Program:
    """One program on droce, started at once; its output goes to @log_path."""

    def __init__(self, link, dropin_dir, argv, log_path, loss=0.0):
        env = dict(os.environ, LD_LIBRARY_PATH=dropin_dir, DROCE_DEVICES=devices(loss))
        self.log_path = log_path
        self.log = open(log_path, "wb")
        # `ip netns exec` execs the program: its pid names the EAL's file prefix
        self.proc = subprocess.Popen(link.argv(argv), env=env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

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
        self.log.close()
        # lib/engine names its EAL file prefix droce-<pid> and removes the folder at exit,
        # which a killed program cannot; hugepage files are unlinked at start
        shutil.rmtree(f"/var/run/dpdk/droce-{self.proc.pid}", ignore_errors=True)

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")
