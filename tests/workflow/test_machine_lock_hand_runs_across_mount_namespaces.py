"""Commands run by hand and measured runs in different mount namespaces. Before: a hand-run
command (train, probe, env-bench, ...) held only the lock file, so one with a /tmp of its own
(systemd PrivateTmp=, `unshare -m`) ran beside a measured run in the host, and a measured run
in the host started beside it: neither looked at, nor held, the machine-wide names. Now a
hand-run command is refused while this user's measured run holds the exclusive name, and holds
a name of a shared series for its life, which refuses a measured run; hand-run commands still
run beside each other, and the trainer record-run starts is still covered by its hold."""

import os
import shlex
import subprocess
import sys

import pytest

from cli_runs import one_line, record_run_with_machine_lock, sacscale
from sacscale.pipeline import machine_lock, machine_wide, socket_owners
from sacscale.pipeline.machine_lock import MachineBusy, hand_run_hold, training_machine
from test_machine_lock import HOLD

ELSEWHERE = ("in another mount namespace (a private /tmp: systemd PrivateTmp=, unshare -m, a container), where that "
             "name is another folder")
REFUSED = ("sacscale env-bench would run beside a measured run and skew its numbers: wait for it to end, or set "
           "SACSCALE_MACHINE_LOCK_DIR to a folder of its own to train beside it knowingly (nothing was started)")
HAND = """
import sys, time
from sacscale.pipeline.machine_lock import MachineBusy, hand_run_hold
try:
    with hand_run_hold(sys.argv[1]):
        print("HELD", flush=True)
        time.sleep(float(sys.argv[2]))
except MachineBusy as exc:
    print(exc, flush=True)
"""
# a name bound in this mount namespace with no lock file held there: as a holder's whose lock file
# was removed (a private /tmp is shown by the tests that make one)
HERE = ("as its machine-wide name says: the lock file there was removed while held (a /tmp cleaner?), and its holder "
        "makes it again")


def _folder(tmp_path, monkeypatch):
    folder = tmp_path / "lk"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(machine_lock.VARIABLE, str(folder))
    return folder


def test_a_hand_run_command_is_refused_while_a_measured_run_elsewhere_holds_the_machine_wide_name(tmp_path,
                                                                                                  monkeypatch):
    folder = _folder(tmp_path, monkeypatch)
    sock, holder = machine_wide.hold(str(folder))  # as a measured run in a private /tmp holds it: no lock file here
    assert sock is not None and holder is None
    try:
        done = sacscale("env-bench", "--steps", "1")
    finally:
        sock.close()
    one_line(done, f"sacscale env-bench: error: this machine's training lock ({folder}) is held by pid {os.getpid()}, "
                   f"{HERE}; {REFUSED}")
    with hand_run_hold("env-bench"):  # the refused command left nothing bound
        pass


def test_a_measured_run_is_refused_while_a_hand_run_commands_shared_name_is_bound(tmp_path, monkeypatch):
    folder = _folder(tmp_path, monkeypatch)
    sock, holder = machine_wide.hold_shared(str(folder), "env-bench")  # no lock file held: as from a private /tmp
    assert sock is not None and holder is None
    try:
        with pytest.raises(MachineBusy) as refused:
            with training_machine("q_r1_n1", "B"):
                pass
    finally:
        sock.close()
    assert str(refused.value) == (
        f"this machine's training lock ({folder}) is held by `sacscale env-bench` (pid {os.getpid()}; not a measured "
        f"run), {HERE}: a command run by hand or another pipeline invocation's probe stage is training or "
        "measuring on this machine; a run beside it would share its GPUs and CPUs and measure against its load. Run "
        "again once it has finished (completed runs stay done)")
    with training_machine("q_r1_n1", "B"):  # the refused run let its own name go; the command's is gone
        pass


def test_hand_run_commands_hold_beside_each_other_and_let_go_after(tmp_path, monkeypatch):
    folder = _folder(tmp_path, monkeypatch)
    with hand_run_hold("train"), hand_run_hold("probe"):
        assert machine_wide.hand_run_holder(str(folder)) is not None
    assert machine_wide.hand_run_holder(str(folder)) is None


def test_an_unreadable_socket_list_leaves_the_hand_run_command_to_the_lock_file(tmp_path, monkeypatch, capsys):
    folder = _folder(tmp_path, monkeypatch)

    def unreadable(names):
        raise socket_owners.ListingUnavailable("the kernel's list of unix sockets (sock_diag) cannot be read here")

    monkeypatch.setattr(socket_owners, "bound", unreadable)
    with hand_run_hold("env-bench"):
        assert machine_wide.hand_run_holder(str(folder)) is None  # nothing left bound
    assert capsys.readouterr().err.splitlines() == [
        f"sacscale: this machine's training lock ({folder}): cannot tell who holds its machine-wide names: the "
        "kernel's list of unix sockets (sock_diag) cannot be read here, so a run in another mount namespace (a "
        "private /tmp) will not be refused (the lock file still holds in this one)"]


def _in_a_private_folder(folder, code, *args):
    """`python -c code args`, started, in a new mount namespace where `folder` is an empty tmpfs."""
    inner = (f"mount --make-rprivate / && mount -t tmpfs -o mode=0700 tmpfs {shlex.quote(str(folder))} && "
             f"exec {shlex.join([sys.executable, '-c', code, *args])}")
    return subprocess.Popen(["unshare", "-m", "sh", "-c", inner], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.fixture
def shared(tmp_path, monkeypatch, private_mounts):
    """A lock folder's name that a process in a private mount namespace sees as another, empty folder."""
    top = tmp_path / "tmp"
    top.mkdir(mode=0o700)
    monkeypatch.setenv(machine_lock.VARIABLE, str(top / "lk"))
    return top


def test_a_hand_run_command_in_a_private_tmp_is_refused_beside_a_measured_run(shared):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "p_r2_n2", "A"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        hand = _in_a_private_folder(shared, HAND, "env-bench", "0")
        said, err = hand.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert said.strip() == f"this machine's training lock ({shared / 'lk'}) is held by pid {holder.pid} {ELSEWHERE}; " \
                           f"{REFUSED}", err


def test_a_measured_run_is_refused_beside_a_hand_run_command_in_a_private_tmp(tmp_path, shared):
    hand = _in_a_private_folder(shared, HAND, "env-bench", "60")
    try:
        assert hand.stdout.readline().strip() == "HELD"
        proc = record_run_with_machine_lock(tmp_path, {})
        beside = _in_a_private_folder(shared, HAND, "train", "0")  # another hand-run command: beside it
        assert beside.communicate(timeout=60)[0].strip() == "HELD"
    finally:
        hand.kill()
        hand.wait()
    assert proc.returncode == 1, proc.stderr
    assert (f"run q_r1_n1 not started: this machine's training lock ({shared / 'lk'}) is held by `sacscale env-bench` "
            f"(pid {hand.pid}; not a measured run) {ELSEWHERE}") in proc.stderr
    assert not (tmp_path / "elsewhere" / "runs" / "q_r1_n1").exists()


def test_every_hand_run_commands_shared_name_fits_an_abstract_socket(tmp_path):
    """A name longer than an abstract socket's 108 bytes (learner-bench's, solver-study's and
    train-reference's were) failed to bind and was taken for a machine without abstract
    sockets: the hold was silently off, and those commands ran beside a measured run elsewhere."""
    from sacscale.cli import _ON_THE_MACHINE
    from sacscale.pipeline import machine_wide

    if not sys.platform.startswith("linux"):
        pytest.skip("abstract unix sockets are Linux's")
    for command in sorted(_ON_THE_MACHINE):
        sock, holder = machine_wide.hold_shared(str(tmp_path / ("x" * 200)), command)
        assert sock is not None and holder is None, command
        sock.close()
