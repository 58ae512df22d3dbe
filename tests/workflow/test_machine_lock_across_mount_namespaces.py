"""The machine's training lock seen from a process with a /tmp of its own. Before: the lock
was a file in a folder named by its path, so a process in another mount namespace (systemd
PrivateTmp=, `unshare -m`, a container sharing the host's GPUs) found another folder at that
name and took "the" lock while a run outside held it: two trainings at once. Now the run also
holds a name every mount namespace shares, and the second is refused naming the first."""

import os
import shlex
import subprocess
import sys

import pytest

from sacscale.pipeline import machine_lock, machine_wide, socket_owners
from sacscale.pipeline.machine_lock import MachineBusy, training_machine
from test_machine_lock import HOLD


def _in_a_private_folder(folder, code, *args, own_pids=False):
    """`python -c code args` in a new mount namespace where `folder` is an empty tmpfs (and, with
    `own_pids`, in a new PID namespace that sees only its own processes)."""
    pids = ["-p", "--fork"] if own_pids else []
    proc = "mount -t proc proc /proc && " if own_pids else ""
    inner = (f"mount --make-rprivate / && mount -t tmpfs -o mode=0700 tmpfs {shlex.quote(str(folder))} && "
             f"{proc}exec {shlex.join([sys.executable, '-c', code, *args])}")
    return subprocess.run(["unshare", "-m", *pids, "sh", "-c", inner], capture_output=True, text=True, timeout=60,
                          check=False)


TRY = """
import sys
from sacscale.pipeline.machine_lock import MachineBusy, training_machine
try:
    with training_machine("q_r9_n1", "C"):
        print("HELD")
except MachineBusy as exc:
    print(exc)
"""


def test_a_run_with_its_own_tmp_is_refused_while_another_holds_the_machine(tmp_path, monkeypatch, private_mounts):
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o700)
    monkeypatch.setenv(machine_lock.VARIABLE, str(shared / "lk"))  # the same name in both: another folder in each
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "p_r2_n2", "A"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = _in_a_private_folder(shared, TRY)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"this machine's training lock ({shared / 'lk'}) is held by pid {holder.pid} in another mount namespace (a "
        "private /tmp: systemd PrivateTmp=, unshare -m, a container), where that name is another folder: another "
        "pipeline invocation is training on this machine; two runs at once would share its GPUs and CPUs and skew "
        "both sets' measurements. Run again once it has finished (completed runs stay done)")
    assert _in_a_private_folder(shared, TRY).stdout.strip() == "HELD"  # the holder gone: its name went with it


def test_the_shared_name_is_held_for_the_run_and_let_go_after(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.VARIABLE, str(tmp_path / "lk"))
    with training_machine("q_r1_n1", "B"):
        sock, holder = machine_wide.hold(str(tmp_path / "lk"))
        assert (sock, holder) == (None, os.getpid())
    sock, holder = machine_wide.hold(str(tmp_path / "lk"))
    assert holder is None and sock is not None
    sock.close()


def test_other_lock_folders_are_other_machines(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.VARIABLE, str(tmp_path / "one"))
    with training_machine("q_r1_n1", "B"):
        monkeypatch.setenv(machine_lock.VARIABLE, str(tmp_path / "two"))
        with training_machine("q_r2_n1", "B"):
            monkeypatch.setenv(machine_lock.VARIABLE, str(tmp_path / "one"))
            with pytest.raises(MachineBusy, match=r"is held by pid \d+ \(run q_r1_n1, set B\)"):
                with training_machine("q_r3_n1", "B"):
                    pass


SQUAT = """
import os, socket, sys
os.setgid(65534)
os.setuid(65534)  # another user, "nobody"
held = []
for name in sys.argv[1:]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(bytes.fromhex(name))
    sock.listen(1)
    held.append(sock)
print("bound", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def squatter(tmp_path):
    """Start another user's process binding the given machine-wide names (as anyone can compute them)."""
    if os.geteuid() != 0:
        pytest.skip("a process of another uid needs root here")
    started = []

    def squat(*names):
        process = subprocess.Popen([sys.executable, "-c", SQUAT, *(name.hex() for name in names)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout.readline().strip() == "bound"
        return process

    yield squat
    for process in started:
        process.kill()
        process.wait()


def test_another_users_name_does_not_turn_the_machine_wide_hold_off(tmp_path, squatter):
    folder = str(tmp_path / "lk")
    squatter(machine_wide.socket_name(folder, 0))
    sock, holder = machine_wide.hold(folder)
    assert sock is not None and holder is None
    try:
        assert machine_wide.hold(folder) == (None, os.getpid())  # the next name, ours: busy
    finally:
        sock.close()


def test_a_squatter_leaving_an_earlier_name_lets_no_second_holder_in(tmp_path, squatter):
    folder = str(tmp_path / "lk")
    squat = squatter(machine_wide.socket_name(folder, 0))
    sock, _ = machine_wide.hold(folder)  # holds name 1
    squat.kill()
    squat.wait()
    try:
        assert machine_wide.hold(folder) == (None, os.getpid())  # name 0 free again, name 1 still ours
    finally:
        sock.close()


def test_every_name_another_users_is_said_and_not_refused(tmp_path, squatter, capsys):
    folder = str(tmp_path / "lk")
    squatter(*(machine_wide.socket_name(folder, index) for index in range(machine_wide.SERIES)))
    assert machine_wide.hold(folder) == (None, None)
    said = capsys.readouterr().err.splitlines()
    assert said == [f"sacscale: this machine's training lock ({folder}): another user's processes hold all "
                    f"{machine_wide.SERIES} of its machine-wide names, so a run in another mount namespace (a "
                    "private /tmp) will not be refused (the lock file still holds in this one); find and stop "
                    "those processes (ss -xap | grep sacscale-training-lock)"]


def test_one_folder_spelled_three_ways_is_one_name(tmp_path):
    folder = str(tmp_path / "lk")
    spellings = [folder, folder + "/", "/" + folder, folder + "/./"]
    assert len({machine_wide.socket_name(spelled, 0) for spelled in spellings}) == 1
    sock, _ = machine_wide.hold(folder)
    try:
        for spelled in spellings[1:]:
            assert machine_wide.hold(spelled) == (None, os.getpid())
    finally:
        sock.close()


FILL = """
import os, socket, sys
os.setgid(65534)
os.setuid(65534)  # another user, "nobody": an abstract name has no permission check
kept = []
for _ in range(int(sys.argv[2])):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        sock.connect(bytes.fromhex(sys.argv[1]))
    except OSError:
        pass
    kept.append(sock)  # never closed: a listener's queue stays full
print("filled", flush=True)
sys.stdin.read()
"""


def test_another_user_filling_the_holders_queue_lets_no_second_holder_in(tmp_path, monkeypatch, private_mounts):
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o700)
    monkeypatch.setenv(machine_lock.VARIABLE, str(shared / "lk"))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "p_r2_n2", "A"], stdout=subprocess.PIPE, text=True)
    filler = None
    try:
        assert holder.stdout.readline().strip() == "held"
        filler = subprocess.Popen([sys.executable, "-c", FILL, machine_wide.socket_name(str(shared / "lk"), 0).hex(),
                                   "80"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert filler.stdout.readline().strip() == "filled"
        done = _in_a_private_folder(shared, TRY)
    finally:
        for process in (holder, filler):
            if process is not None:
                process.kill()
                process.wait()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(f"this machine's training lock ({shared / 'lk'}) is held by pid "
                                          f"{holder.pid} in another mount namespace")


def test_a_holder_outside_this_pid_namespace_is_still_ours(tmp_path, monkeypatch, private_mounts):
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o700)
    monkeypatch.setenv(machine_lock.VARIABLE, str(shared / "lk"))
    with training_machine("q_r1_n1", "B"):
        done = _in_a_private_folder(shared, TRY, own_pids=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(f"this machine's training lock ({shared / 'lk'}) is held by a process "
                                          "of this user outside this PID namespace in another mount namespace")


def test_an_unreadable_socket_list_is_said_and_the_lock_file_still_holds(tmp_path, monkeypatch, capsys):
    folder = str(tmp_path / "lk")

    def unreadable(names):
        raise socket_owners.ListingUnavailable("the kernel's list of unix sockets (sock_diag) cannot be read here "
                                               "([Errno 93] Protocol not supported)")

    monkeypatch.setattr(socket_owners, "bound", unreadable)
    assert machine_wide.hold(folder) == (None, None)
    assert capsys.readouterr().err.splitlines() == [
        f"sacscale: this machine's training lock ({folder}): cannot tell who holds its machine-wide names: the "
        "kernel's list of unix sockets (sock_diag) cannot be read here ([Errno 93] Protocol not supported), so a "
        "run in another mount namespace (a private /tmp) will not be refused (the lock file still holds in this one)"]
    monkeypatch.setenv(machine_lock.VARIABLE, folder)
    with training_machine("q_r1_n1", "B"):
        with pytest.raises(MachineBusy, match=r"is held by pid \d+ \(run q_r1_n1, set B\)"):
            with training_machine("q_r2_n1", "B"):
                pass
    monkeypatch.undo()
    sock, holder = machine_wide.hold(folder)  # nothing was left bound
    assert sock is not None and holder is None and sock.getsockname() == machine_wide.socket_name(folder, 0)
    sock.close()
