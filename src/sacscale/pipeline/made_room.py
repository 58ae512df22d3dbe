"""How much longer than an output's path the paths a command makes from it are: the write's
temporary file beside a file output, the files a trainer makes in its run folder, the
report's staging folder beside its folder, record-run's attempt and learning state under
its attic and state folders. A path that itself fits the file system's bounds was refused
only once the longest of those was made: after the other outputs were written (aggregate
--csv, then --json), after the whole run trained (record-run's learning state), each in a
line thousands of characters long naming no option. Judged with this room before anything
is written (long_names.too_long_problem); each room is the longest this machine can make."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from sacscale.lock_names import WORK_SUFFIX
from sacscale.long_names import NAME_BYTES, TEMPORARY_EXTRA, size, temporary_room
from sacscale.pipeline.run_folder_names import set_aside_name
from sacscale.report.names import NUMBERS_NAME

# the ranks a run can have (a rank's folder `tb/rank<r>`)
_LONGEST_RANK = "rank9999"
# record-run stores a completed run's event files compressed (a temporary beside each first)
_GZ = ".gz"
# the reference trainer's log folder in its run folder, its time the longest form
_REFERENCE_LOGS = "ref_logs/G1WalkFlat/0000-00-00_00-00-00_mujoco"


def _longest_pid() -> str:
    try:
        return str(int(Path("/proc/sys/kernel/pid_max").read_text()))
    except (OSError, ValueError):
        return str(2 ** 22)  # Linux's largest pid_max


def event_file() -> str:
    """The longest event file a trainer's rank makes here (TensorBoard's
    `events.out.tfevents.<time>.<host>.<pid>.<n>`), in its rank's folder."""
    return f"tb/{_LONGEST_RANK}/events.out.tfevents.{10 ** 10 - 1}.{socket.gethostname()}.{_longest_pid()}.999"


def _in_run_folder(recorded: bool) -> str:
    """The longest path a trainer makes in its run folder, relative to it; `recorded`: record-run's
    run folder, whose event files it compresses, each written beside as a temporary first; the
    reference trainer's logs lie a folder deeper than ours (`ref_logs/<task>/<time>_mujoco`)."""
    ours = event_file()
    if not recorded:
        return ours
    theirs = f"{_REFERENCE_LOGS}/{ours.rsplit('/', 1)[1]}"
    return max(ours, theirs, key=len) + _GZ + "x" * TEMPORARY_EXTRA


def run_folder_room(recorded: bool = False) -> tuple[int, str]:
    """(room, what) of a trainer's run folder (train's --log-dir, record-run's run folders)."""
    made = _in_run_folder(recorded)
    return len(os.fsencode(made)) + 1, f"the files made inside it (such as {made.split('/', 1)[0]}/...)"


# a report's staging folder beside its folder: `.<name>.report-<8 letters>` in place of the
# folder's name, then what is written in it: in its figures folder the longest a figure's
# temporary (figures/.<figure>.tmp<pid>.<thread><suffix>), beside its pages numbers.json's
# temporary (longer than the staging folder's marker), each file it replaces set aside under
# `.replaced/`. Each of report's outputs, whichever form names it, is staged so. A folder's
# name too long for that has it cut in the staging folder's (held_locks.report_staging_prefix).
_STAGING_EXTRA = len("..report-") + 8
_FIGURE = "throughput_by_repeat.png"
_IN_REPORT = f"figures/{_FIGURE}"
_SET_ASIDE = len(".replaced/")
_STAGED = "the files staged in the report's staging folder (made beside the report's folder)"


def _report_room(option: str, value: str) -> tuple[int, str]:
    """(room, what) of one of report's outputs: the folder (`--output-dir`), its figures folder
    (`--figures-dir`, inside the report's folder) or a page (`--output-md`, `--output-html`),
    each staged in the staging folder beside the report's folder."""
    figure = len(os.fsencode(_FIGURE)) + TEMPORARY_EXTRA
    if option == "--output-dir":
        staging = min(_STAGING_EXTRA, max(0, NAME_BYTES - size(os.path.basename(value))))  # cut to fit a name
        return staging + len("/figures/") + figure, "the staging folder made beside it, and the figures in that"
    if option == "--figures-dir":
        return _STAGING_EXTRA + 1 + figure, _STAGED
    name = os.path.basename(value)
    page = size(name)
    beside = max(page + temporary_room(name), _SET_ASIDE + page, size(NUMBERS_NAME) + TEMPORARY_EXTRA)
    return _STAGING_EXTRA + beside - page, _STAGED


def output_room(command: str, option: str, value: str, folder: bool) -> tuple[int, str]:
    """(room, what) for an output option's value: how much longer the longest path the command
    makes from it is, and what that path is, said for the user."""
    if command in ("train", "train-reference") and option in ("--log-dir", "--resume"):
        return run_folder_room(recorded=command == "train-reference")
    if command == "report" and option in ("--output-dir", "--figures-dir", "--output-md", "--output-html"):
        return _report_room(option, value)
    if not folder:
        return temporary_room(os.path.basename(value)), "the temporary file written beside it first"
    return len(os.fsencode(_IN_REPORT)) + 1 + TEMPORARY_EXTRA, "the files written inside it"


def record_run_paths(run_dir: Path, work_dir: Path, attic: Path, state_dir: Path | None):
    """(option, folder, room, what) of record-run's folders, with the run's names in them: the
    run folder and its work folder hold a trainer's files, the attic `<run>.failed-<time>`
    holding those, the learning state's folder `<run>/...` (an earlier one's set aside beside
    it); a set-aside name is cut to fit a name's bound (run_folder_names.set_aside_name)."""
    room, what = run_folder_room(recorded=True)
    names = (run_dir.name, work_dir.name.lstrip(".").removesuffix(WORK_SUFFIX))  # the work folder's too
    attempt = max((set_aside_name(name, "interrupted", attic) for name in names), key=size)
    yield "--run-dir", run_dir, room, what
    yield "--work-dir", work_dir, room, what
    yield "--attic", attic, len(os.fsencode(attempt)) + 1 + room, f"a failed attempt moved into it ({attempt}/...)"
    if state_dir is not None:
        state = f"{set_aside_name(run_dir.name, 'superseded', state_dir)}/{_REFERENCE_LOGS}/model_{10 ** 9}.pt"
        yield ("--state-dir", state_dir, len(os.fsencode(state)) + 1,
               f"the run's learning state moved into it ({run_dir.name}/...)")
