"""A single-host multi-rank job listens on loopback only (docs/faults.md row 17).

torch's env:// rendezvous store listens on every interface whatever MASTER_ADDR says;
ours binds MASTER_ADDR (127.0.0.1 for a single-host job) itself. `check_loopback_only`
reads the listening TCP sockets of every process of a running job from /proc and checks
that each is bound to a loopback address, and that a connection to a non-loopback
address of this host on those ports is refused. It runs on the 2-rank jobs of
test_trainer_interrupted.py before their signal: a job of its own would cost the suite
another two ranks' start-up for a check of a few milliseconds.
"""

import ipaddress
import os
import socket

from faultkit import Job, record

LISTEN = "0A"


def _listening_sockets() -> dict[int, tuple[str, int]]:
    """{inode: (address, port)} of every listening TCP socket of this network namespace."""
    out = {}
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] != LISTEN:
                continue
            hex_addr, hex_port = f[1].split(":")
            raw = bytes.fromhex(hex_addr)
            # /proc prints the address as host-order 32-bit words
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            out[int(f[9])] = (str(ipaddress.ip_address(raw)), int(hex_port, 16))
    return out


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    except OSError:
        pass
    return inodes


def _external_address() -> str | None:
    """A non-loopback address of this host (the one used to reach the outside), if any."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET: no packet is sent for a UDP connect
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(addr).is_loopback else addr


def check_loopback_only(job: Job) -> None:
    listening = _listening_sockets()
    ours = {}
    for p in job.processes():
        for inode in _socket_inodes(p.pid):
            if inode in listening:
                ours[inode] = (p.pid, *listening[inode])
    external = _external_address()
    refused = []
    for _, addr, port in ours.values():
        if external:
            with socket.socket() as s:
                s.settimeout(2)
                refused.append(s.connect_ex((external, port)) != 0)
    record("listening sockets", sockets=sorted(ours.values()), external_address=external, refused=refused)
    assert ours, "the job should listen somewhere (the rendezvous store, gloo)"
    bad = [entry for entry in ours.values() if not ipaddress.ip_address(entry[1]).is_loopback]
    assert bad == [], f"listening beyond loopback: {bad}"
    assert all(refused)
