"""The CLI's judgement of a command's output options, before the command runs.

Each output a command names (a file, or a folder it fills; record-run's folders too where a
run set's rules apply) is judged in one pass, in a fixed order, each refusal one usage line
(exit 2) before anything is made: a file named as a folder, the kernel's and the devices'
file systems, another user's links and link loops, devices, FIFOs and sockets, a committed or
finished run set's evidence, a folder another user could swap entries in. What passes is
then joined to the working folder, so a write at the end of a long command names its file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path
from sacscale.atomic import file_kind, others_can_swap, refuse_special
from sacscale.commands._finished_sets import finished_set_problem
from sacscale.commands._output_lock import foreign_link_problem, link_loop_problem
from sacscale.commands._system_outputs import reaches_the_system, system_output_refusal
from sacscale.finished_sets import set_folders, spellings
from sacscale.git_command import run_git
from sacscale.pipeline.folder_options import path_value_problem
from sacscale.pipeline.made_room import output_room


def refuse_bad_outputs(command: str, parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every output check, in its order (parser.error on the first refusal), then each relative
    file output made absolute."""
    _refuse_folder_names(parser, args)
    _refuse_system_outputs(parser, args)
    _refuse_foreign_link_outputs(parser, args)
    _refuse_special_outputs(parser, args)
    _refuse_committed_outputs(parser, args)
    _refuse_finished_set_outputs(command, parser, args)
    if command not in _OWN_FOLDER_CHECK:
        _refuse_shared_outputs(parser, args)
    _outputs_made_absolute(parser, args)


def names_a_path(action: argparse.Action, value) -> bool:
    """Whether an option's value is a path (not a word such as `--device cuda`): typed as one,
    an output, spelled with a folder in it, or the name of something here."""
    return (action.type is Path or action.dest in _OUTPUTS or isinstance(value, Path) or os.sep in value
            or os.path.lexists(value))


# the options by which a command writes (a file, or a folder it fills); report's --manifest-json
# and --video-record, verify's --manifest are read; a trainer's --log-dir is its run's folder,
# and train --resume continues the run in its own folder, writing there
_OUTPUTS = {"output", "diff_output", "out", "csv", "json", "figure", "record", "output_dir", "output_md",
            "output_html", "figures_dir", "left_out_dir", "log_dir", "resume"}


def _tracked_under(path: Path) -> int:
    """Files git tracks at or under `path`, in the repository that holds it (0 outside one)."""
    folder = next((p for p in (path, *path.parents) if p.is_dir()), None)
    if folder is None:
        return 0
    try:
        listed = run_git(["ls-files", "-z", "--", str(path)], str(folder))
    except (OSError, subprocess.SubprocessError):
        return 0
    return listed.stdout.count(b"\0") if listed.returncode == 0 else 0


# record-run's folders (the run's, its work folder, its attic, its learning state's) and its
# log (a file): not outputs the other checks judge (record-run judges them itself), but written
# into a run set as any output is, so held to the committed, finished and planned sets' rules
_RECORD_RUN_FOLDERS = ("run_dir", "work_dir", "attic", "state_dir")
_RECORD_RUN_LOG = "log"


def _set_writes(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """_given_outputs and record-run's folders and log: what may land in a run set."""
    yield from _given_outputs(parser, args)
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if action.dest in (*_RECORD_RUN_FOLDERS, _RECORD_RUN_LOG) and action.option_strings and value:
            yield action.option_strings[0], value, action.dest != _RECORD_RUN_LOG


def _given_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """(option, value, whether it names a folder) of each output option given a value."""
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if action.dest == "log_dir" and getattr(args, "resume", None) and value == action.default:
            continue  # train --resume writes in the run's own folder, not the default --log-dir
        if action.dest in _OUTPUTS and action.option_strings and isinstance(value, (str, Path)) and value:
            yield action.option_strings[0], value, action.dest in _OUTPUT_FOLDERS


def _refuse_folder_names(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A file output named as a folder (`--output /tmp/x/vout/`, `--json out/.`) is refused:
    `verify S --output /tmp/x/vout/` wrote a file named vout; so is one that is a folder
    (not a link, which the write replaces), which the write refused only after the work
    (a whole `learner-bench`), and so is a link leading to a folder, which the write would
    replace."""
    for option, value, folder in _given_outputs(parser, args):
        if not folder and isinstance(value, str) and (value.endswith(("/", os.sep))
                                                      or os.path.basename(value) in (".", "..")):
            parser.error(f"argument {option}: {value} names a folder (a trailing / or . or ..); "
                         "this option is a file: give its name")
        if not folder and os.path.isdir(value) and not os.path.islink(value):
            parser.error(f"{option} {value}: is a folder, not a file; this option is a file: give its name")
        if not folder and (target := _link_to_a_folder(value)):
            parser.error(f"argument {option}: {value} leads to a folder (a link to {target}); this option is a "
                         "file: give its name")


def _refuse_special_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A file output that is a device, FIFO or socket is refused now: the write refuses it
    too, but only after the work. So is a link leading to one (as a link to a folder is):
    the write would replace the user's link with a file, the FIFO never written. So is one
    blank, too long (also for what the command makes from it) or at a lock's name."""
    for option, value, folder in _given_outputs(parser, args):
        room, made = output_room(parser.prog.split()[-1], option, str(value), folder)
        if problem := path_value_problem(str(value), room=room, made=made):
            parser.error(f"argument {option}: {problem}")
        try:
            None if folder else refuse_special(Path(value))
        except OSError as exc:
            parser.error(f"argument {option}: {value}: {exc.strerror}")
        if not folder and os.path.islink(value) and (kind := file_kind(value)) not in (None, "a plain file",
                                                                                        "a folder"):
            parser.error(f"argument {option}: {value} leads to {kind} (a link to {os.readlink(value)}): an output "
                         "replaces a file, never a device, FIFO or socket")


def _link_to_a_folder(value) -> str | None:
    """What a link at `value` says, where it leads to a folder or names one (a trailing /)."""
    if not os.path.islink(value):
        return None
    target = os.readlink(value)
    names_a_folder = target.endswith(("/", os.sep)) or os.path.basename(target) in (".", "..")
    return target if names_a_folder or os.path.isdir(value) else None


# a trainer's run folder: where it writes while it runs, or continues a run
_RUN_FOLDERS = ("--log-dir", "--resume")


def _outputs_made_absolute(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Each relative file output joined to the working folder now, after the checks (which
    name it as given): a write at the end of a long command then names its file even where
    the working folder was removed meanwhile (a run folder is no file output)."""
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if (action.dest in _OUTPUTS and action.dest not in _OUTPUT_FOLDERS and action.option_strings
                and isinstance(value, (str, Path)) and value and not os.path.isabs(value)):
            setattr(args, action.dest, type(value)(os.path.abspath(value)))


def _refuse_system_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An output in /proc, /sys or on the devices' file system, or leading there through links
    (a stream, a device), is refused: the outputs are written whole beside their name and
    renamed onto it (sacscale.commands._system_outputs; /dev/shm is an ordinary folder). So is
    a trainer's run folder there: through a link of one's own it failed as a missing folder."""
    for option, value, _ in _given_outputs(parser, args):
        try:
            refused = reaches_the_system(value)
        except (OSError, RuntimeError):  # a link loop: the command names it
            continue
        if refused:
            parser.error(f"argument {option}: {system_output_refusal(value, run_folder=option in _RUN_FOLDERS)}")


def _refuse_foreign_link_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every output reached through another user's symbolic link, or through a link loop, is
    refused before any is made or locked: the lock's folder was made through the link, and a
    first output written. A trainer's run folder it judges itself (sacscale.checks)."""
    for option, value, folder in _given_outputs(parser, args):
        if option in _RUN_FOLDERS:
            continue
        if problem := foreign_link_problem(value, folder) or link_loop_problem(value, folder):
            parser.error(f"argument {option}: {value}: {problem}")


def _refuse_committed_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A committed run set's file is evidence and is never replaced: an output named by a slip
    (another set's summary.csv, MANIFEST.sha256, verify.json, report folder) was written over
    it; nor is a new file added to such a set (verify then names it as extra). Other
    committed files (a figure of docs/ drawn again) are the developer's to replace."""
    for option, value, folder in _set_writes(parser, args):
        try:  # a folder it fills resolved whole; a file's folder resolved, its name not (a link is replaced)
            written = spellings(value, names_folder=folder)
        except (OSError, RuntimeError):  # a link loop: the command names it
            continue
        for where in written:
            problem = _committed_problem(value, where)
            if problem:
                parser.error(f"argument {option}: {problem}")


def _committed_problem(value, where: Path) -> str | None:
    """Why `value`, reaching `where`, would rewrite or add to a committed run set; else None."""
    # the outermost results/<set> or reports/<set> that holds it: results/S/reports/x is in S
    run_set = next(iter(set_folders(where)), None)
    if run_set is None:
        return None
    if _tracked_under(where):
        return f"{value} is committed (git tracks it), evidence that is not rewritten; write to a new file or folder"
    if run_set != where and _tracked_under(run_set):  # a new file there fails the set's verification
        return (f"{value} is inside {run_set.parent.name}/{run_set.name}, a committed run set (git tracks it), "
                "whose evidence is not rewritten or added to; write outside it")
    return None


def _refuse_finished_set_outputs(name: str, parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An output inside a finished run set's evidence (its manifest made) is refused, whatever
    the command (sacscale.commands._finished_sets)."""
    for option, value, folder in _set_writes(parser, args):
        problem = finished_set_problem(name, args, option, value, folder)
        if problem:
            parser.error(f"argument {option}: {problem}")


# output options that name a folder the command fills (the others name a file)
_OUTPUT_FOLDERS = {"output_dir", "figures_dir", "left_out_dir", "log_dir", "resume"}
# commands that refuse such a folder themselves, in their own words (report: its figures folder too)
_OWN_FOLDER_CHECK = {"report"}


def _refuse_shared_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An output is not written into a folder where another user can rename entries (theirs,
    or open to others or to a group with other members, without the sticky bit:
    sacscale.atomic.others_can_swap), nor into one inside such a folder: that user could
    swap the file for their own between its writing and its reading, or move the folder
    away after this check and put one of theirs at its name, which the write, made by path
    later, would go into. With every folder on the way judged, no one but this user and
    root can change where the path leads, so checking once here holds until the write. A
    folder not made yet is judged by the one it would be made in. /tmp (sticky) is fine."""
    for option, value, folder in _given_outputs(parser, args):
        path = Path(value).absolute()
        holder = path if folder else path.parent
        existing = next((f for f in (holder, *holder.parents) if f.exists()), None)
        problem = others_can_swap(existing) if existing is not None else None
        if problem:
            made = "" if existing == holder else f" (where {holder} would be made)"
            parser.error(f"argument {option}: {existing}{made}: {problem}, who could replace "
                         f"what is written there; write {value} into a folder of your own")

