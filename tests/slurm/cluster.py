"""A real single-node SLURM cluster on this machine, for the SLURM profile's test.

munged, slurmctld and slurmd (Debian packages munge, slurmctld, slurmd, slurm-client)
run in the foreground as children of this process, with every config, key, socket, log
and state file in one directory; `stop()` ends them by their PIDs. No accounting
(sacct is unavailable: status by squeue), no cgroups (proctrack/linuxproc, task/none).

The node declares 64 CPUs, 256 GB and two `gpu` GRES whatever the machine has
(SlurmdParameters=config_overrides; the GRES are backed by /dev/null and /dev/zero, as
SLURM counts GPUs by device file), so the shipped profile's requests (gres gpu:2, 32
CPUs, --exclusive) are accepted as they are; nothing is bound, the jobs run on the
machine's real cores. The partition is named `gpu`, as in profiles/slurm. The clients
(sbatch, srun, squeue, ...) are reached through wrappers in DIR/bin that name the config.

By hand: `python tests/slurm/cluster.py DIR` starts one and waits; Ctrl-C stops it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

NODE = "gpunode1"
PARTITION = "gpu"
CLIENTS = ("sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo")
DAEMONS = ("munged", "slurmctld", "slurmd", *CLIENTS)


def missing_tools() -> list[str]:
    """The programs a cluster needs that are not installed (daemons live in /usr/sbin)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    return [tool for tool in DAEMONS if shutil.which(tool, path=path) is None]


def _tool(name: str) -> str:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    found = shutil.which(name, path=path)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLURM_CONF = ("""\
# Written by tests/slurm/cluster.py: one node, no accounting, no cgroups.
ClusterName=sacscale-test
SlurmctldHost={host}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge.socket
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
# finished jobs stay visible to squeue/scontrol for an hour (the executor plugin's status
# queries, and the test's look at where each job ran)
MinJobAge=3600
InactiveLimit=0
KillWait=10
GresTypes=gpu
""" "NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=64 Sockets=1 CoresPerSocket=64 ThreadsPerCore=1 "
    "RealMemory=262144 Gres=gpu:2 State=UNKNOWN\n" """\
PartitionName={partition} Nodes={node} Default=YES MaxTime=INFINITE State=UP
""")

GRES_CONF = "NodeName={node} Name=gpu File=/dev/null\nNodeName={node} Name=gpu File=/dev/zero\n"


class Cluster:
    """Start with `start()`, stop with `stop()`; `env` is the environment for clients."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.procs: dict[str, subprocess.Popen] = {}
        self.conf = self.root / "slurm.conf"
        self.bin = self.root / "bin"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf),
                    "PATH": os.pathsep.join([str(self.bin), os.environ.get("PATH", "")])}

    def _write_configs(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # munged refuses a socket directory others can write
        for sub in ("state", "spool"):
            (self.root / sub).mkdir(exist_ok=True)
        values = dict(host=socket.gethostname().split(".")[0], user=os.environ.get("USER") or "root",
                      dir=self.root, ctld_port=_free_port(), slurmd_port=_free_port(), node=NODE,
                      partition=PARTITION)
        if os.geteuid() == 0:
            values["user"] = "root"
        self.conf.write_text(SLURM_CONF.format(**values))
        (self.root / "gres.conf").write_text(GRES_CONF.format(node=NODE))
        # Client wrappers that name this cluster's config: the executor plugin's job step
        # drops every SLURM_* variable (SLURM_CONF too) before its srun, and the config
        # is not at the default path /etc/slurm/slurm.conf.
        self.bin.mkdir(exist_ok=True)
        for client in CLIENTS:
            wrapper = self.bin / client
            wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {_tool(client)} "$@"\n')
            wrapper.chmod(0o755)
        key = self.root / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            os.chmod(key, 0o400)

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / f"{name}.out", "ab")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def _wait(self, what: str, check, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with status {proc.returncode} while waiting for {what}; "
                                       f"{self.tail(name)}")
            if check():
                return
            time.sleep(0.3)
        raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}; {self.tail('slurmctld')} "
                           f"{self.tail('slurmd')}")

    def tail(self, name: str, n: int = 1500) -> str:
        texts = []
        for suffix in (".out", ".log"):
            path = self.root / f"{name}{suffix}"
            if path.exists():
                texts.append(f"{path.name}: ...{path.read_text(errors='replace')[-n:]}")
        return " | ".join(texts) or f"(no log of {name})"

    def start(self, timeout: float = 60) -> "Cluster":
        self._write_configs()
        sock = self.root / "munge.socket"
        self._spawn("munged", [_tool("munged"), "--foreground", "--force", f"--socket={sock}",
                               f"--key-file={self.root / 'munge.key'}", f"--pid-file={self.root / 'munged.pid'}",
                               f"--log-file={self.root / 'munged.log'}", f"--seed-file={self.root / 'munged.seed'}"])
        self._wait("munged's socket", sock.exists, timeout)
        self._spawn("slurmctld", [_tool("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._wait("slurmctld", lambda: self.scontrol("ping").returncode == 0 and "UP" in self.scontrol("ping").stdout,
                   timeout)
        self._spawn("slurmd", [_tool("slurmd"), "-D", "-N", NODE, "-f", str(self.conf)])
        self._wait(f"node {NODE} idle", self._node_idle, timeout)
        return self

    def scontrol(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([_tool("scontrol"), *args], capture_output=True, text=True, env=self.env, timeout=30)

    def _node_idle(self) -> bool:
        out = self.scontrol("show", "node", NODE).stdout
        return "State=IDLE" in out

    def jobs(self) -> list[dict]:
        """Every job slurmctld still knows (MinJobAge=3600), as scontrol's KEY=VALUE fields."""
        proc = self.scontrol("show", "job", "--oneliner")
        if proc.returncode != 0 or "No jobs in the system" in proc.stdout:
            return []
        records = []
        for line in proc.stdout.splitlines():
            fields = {}
            for item in line.split():
                key, sep, value = item.partition("=")
                if sep:
                    fields[key] = value
            if fields:
                records.append(fields)
        return records

    def stop(self) -> None:
        """End the daemons started here, by PID: slurmd, slurmctld, then munged."""
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/slurm/cluster.py DIR")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the daemons on SIGTERM too
    cluster = Cluster(Path(sys.argv[1])).start()
    print(f"single-node cluster up (node {NODE}, partition {PARTITION}): export PATH={cluster.bin}:$PATH "
          f"for its clients; Ctrl-C stops it", flush=True)
    try:
        signal.pause()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        cluster.stop()
