"""The one entry point: `sacscale <command> ...`.

Each command lives in its own module under `sacscale.commands`, exposing
`add_arguments(parser)` and `run(args) -> int`. Modules are imported lazily so that
`sacscale analyze-run` does not pay for importing torch or MuJoCo.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from sacscale import __version__
from sacscale.atomic import file_kind, others_can_swap, output_name, refuse_special
from sacscale.commands import BadInput
from sacscale.commands._finished_sets import finished_set_problem
from sacscale.finished_sets import set_folders
from sacscale.commands._output_lock import foreign_link_problem, link_loop_problem
from sacscale.commands._system_outputs import reaches_the_system, system_output_refusal
from sacscale.eval.gl_backend import GLBackendError, mujoco_gl_problem
from sacscale.stopping import Interrupted, ended_by_stop, raised_as_interrupted, stop_raised
from sacscale.commands._value_kinds import parsed_value_problem, unheld_value
from sacscale.held_names import encoding_holds_any_name, shown_name
from sacscale.long_names import shortened
from sacscale.pipeline.folder_options import path_value_problem
from sacscale.pipeline.made_room import output_room
from sacscale.safe_path import working_folder_off_child_paths
from sacscale.usage import UsageParser, escape_what_the_encoding_cannot_hold
from sacscale.usage import printable as _printable

# command name -> (module under sacscale.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("train", "train FastSAC on G1WalkFlat (one or more ranks)"),
    "train-reference": ("train_reference",
                        "train the reference trainer (unilab 1.5.2) into a run directory analyze-run reads"),
    "reference-env": ("reference_env", "create (when asked) and record the reference trainer's own environment"),
    "env-bench": ("env_bench", "physics-only and full env-step throughput"),
    "solver-study": ("solver_study", "per-step cost and trajectory deviation of constraint-solver settings"),
    "learner-bench": ("learner_bench", "ms per learner iteration: eager, compiled, graphed, both"),
    "prepare-model": ("prepare_model", "build the G1 task model, save .mjb + SHA-256, measure step cost"),
    "probe": ("probe", "correctness probe of data-parallel gradient sync"),
    "plan-matrix": ("plan_matrix", "the run matrix planned from this machine's (or a recorded) CPU/GPU topology"),
    "verify-env": ("verify_env", "record the software/hardware environment and check a preset fits it"),
    "analyze-run": ("analyze_run", "compute a run's throughput metrics from its event files"),
    "evaluate": ("evaluate", "velocity-tracking errors of a trained policy on a fixed command grid, vs standing still"),
    "render": ("render", "video (.mp4/.gif) of a trained policy following a sequence of velocity commands"),
    "render-best": ("render_best", "video of the best-evaluated run's policy, and a record of the choice"),
    "compare-learning": ("compare_learning",
                         "learning curves (return, length, tracking) of several runs against env steps"),
    "aggregate": ("aggregate", "aggregate per-run metrics into summary.csv/json"),
    "report": ("report", "write the Markdown/HTML report and figures"),
    "manifest": ("manifest", "write the SHA-256 evidence manifest"),
    "verify": ("verify", "re-hash evidence against the manifest and recompute metrics"),
    "record-run": ("record_run", "run one training command into one complete run directory (the pipeline's run rule)"),
}


# The parser's description: a constant, since `python -OO` drops the docstring.
SUMMARY = "The one entry point: `sacscale <command> ...`."

EPILOG = ("Exit status: 0 done; 2 a usage error (an unknown option, a bad option value); any other: it "
          "failed, the message names the cause. `sacscale COMMAND --help` lists a command's options. "
          "The pipeline is Snakemake's: run "
          "`snakemake --cores all` in the repository root, the directory with the Snakefile (elsewhere Snakemake "
          "says \"No Snakefile found\"); README.md there.")


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(prog="sacscale", description=SUMMARY, epilog=EPILOG,
                                     allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"sacscale {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.set_defaults(_module=module_name)
        # Arguments are added only for the chosen command (see main), to keep imports lazy.
    return parser


class _Inert:
    """A text stream whose control characters (ESC, BEL, C1 codes: a file or folder name's
    terminal escape sequences) are written escaped; tab, newline and carriage return (a
    progress bar) pass. Every command prints names it read from the file system."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        # an undecodable byte (a lone surrogate, `\udcff`) as the shell writes it: `\xff`
        shown = _CONTROLS.sub(lambda m: shown_name(m.group())[1:-1] if m.group() > "\x9f" else repr(m.group())[1:-1],
                              text)
        # a name that is not UTF-8 holds surrogates (`\udcff`), which a UTF-8 stream refuses
        # and a character the stream's encoding cannot hold (`…` under an ASCII locale) would
        # raise, failing a command after its work: both written as escapes
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        try:
            shown = shown.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:  # a stream whose encoding Python does not know: as UTF-8
            shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
        self._stream.write(shown)
        return len(text)

    def __getattr__(self, name):  # flush, fileno, isatty, buffer (raw bytes: a trainer's output teed as it is)
        return getattr(self._stream, name)


_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\udc80-\udcff]")


def main(argv: list[str] | None = None) -> int:
    # called without argv, main is the process's own entry point (the console script,
    # `python -m sacscale`): only there may a stop leave the signals ignored until the
    # process exits; a caller in the same process (a test) gets its handlers back
    until_exit, argv = argv is None, list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with `>&-`: Python gives None for a closed stream
        if sys.stderr is not None:
            sys.stderr.write("sacscale: error: standard output is closed; give the command somewhere to write "
                             "(a file, /dev/null)\n")
        return 2
    escape_what_the_encoding_cannot_hold()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Inert(sys.stdout), _Inert(sys.stderr)
    try:
        if problem := _working_folder_problem(argv):
            print(problem, file=sys.stderr)
            return 2
        with working_folder_off_child_paths():  # before any child Python starts
            return _guarded(argv, until_exit)
    finally:
        sys.stdout, sys.stderr = streams


def _working_folder_problem(argv: list[str]) -> str | None:
    """A command run in a folder that was removed: every relative path (and `.absolute()`)
    fails on it, as a traceback or an `error: no such file or directory` naming nothing; so
    judged before any option is. `--help` and `--version` name no file and still answer.
    Refused even where every path given is absolute: the commands read the working folder
    itself (its git state for environment.json, the run folders and lock files the planner
    and record-run resolve against it), which a check of the options cannot see."""
    if not argv or argv[0] not in COMMANDS:
        return None
    try:
        os.getcwd()
    except OSError:
        return (f"sacscale {argv[0]}: error: the working folder was removed (or cannot be read): "
                f"cd to a folder that exists")
    return None


# commands that supervise children (the trainer, its ranks) and stop them on SIGTERM in
# their own order, with handlers of their own (sacscale.stopping, the run wrapper's)
_OWN_STOP_HANDLING = {"train", "train-reference", "record-run"}


def _guarded(argv: list[str], until_exit: bool = False) -> int:
    name = argv[0] if argv and argv[0] in COMMANDS else ""
    stops = contextlib.nullcontext() if name in _OWN_STOP_HANDLING else raised_as_interrupted(until_exit)
    try:
        with stops:
            return _main(argv)
    # Ctrl-C (also while torch is still being imported): the user's stop, not a bug; SIGTERM,
    # SIGHUP: unwound as Ctrl-C is, its temporary files removed; a command that runs children
    # handles them itself and returns its own status, or raises the stop once they have ended
    except (KeyboardInterrupt, Interrupted) as stop:
        return ended_by_stop(f"sacscale{' ' + name if name else ''}", stop, until_exit)


def _main(argv: list[str]) -> int:
    parser = build_parser()
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv)  # --version, --help, or usage / error (exit 2)
        return 2
    name = argv[0]
    try:  # a command module that imports MuJoCo at the top fails here on a broken MUJOCO_GL
        module = importlib.import_module(f"sacscale.commands.{COMMANDS[name][0]}")
    except Exception as exc:  # noqa: BLE001 - one line instead of a traceback (docs/faults.md)
        return _error_line(name, exc)
    # No abbreviated options: a recorded command line must mean exactly what it says.
    cmd_parser = UsageParser(prog=f"sacscale {name}", description=COMMANDS[name][1], allow_abbrev=False)
    module.add_arguments(cmd_parser)
    if problem := parsed_value_problem(cmd_parser, argv[1:]):  # before argparse shows `\xff` as `\udcff`
        cmd_parser.error(problem)
    args = cmd_parser.parse_args(argv[1:])
    _refuse_empty_values(cmd_parser, args)
    _refuse_names_the_encoding_cannot_hold(name, cmd_parser, args)
    _refuse_folder_names(cmd_parser, args)
    _refuse_system_outputs(cmd_parser, args)
    _refuse_foreign_link_outputs(cmd_parser, args)
    _refuse_special_outputs(cmd_parser, args)
    _refuse_committed_outputs(cmd_parser, args)
    _refuse_finished_set_outputs(name, cmd_parser, args)
    if name not in _OWN_FOLDER_CHECK:
        _refuse_shared_outputs(cmd_parser, args)
    _outputs_made_absolute(cmd_parser, args)
    if name in _MUJOCO_IN_CHILDREN and (gl_problem := mujoco_gl_problem()):
        print(f"sacscale {name}: error: {_printable(gl_problem)}", file=sys.stderr)
        return 2
    try:
        return int(module.run(args) or 0)
    except Exception as exc:  # noqa: BLE001 - one line instead of a traceback (docs/faults.md)
        return _error_line(name, exc)


# commands whose child processes import MuJoCo (collectors, ranks): a MUJOCO_GL it refuses
# failed there, in a child's traceback, after the job had started
_MUJOCO_IN_CHILDREN = {"train", "probe"}


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An empty value (`--output ""`, `--csv "$UNSET"`) is no file and no setting: taken as the
    option left out, or as the path '', it wrote to the default or failed as unexpected. An
    option whose own default is empty may be given so (exit 2, usage)."""
    for action in parser._actions:
        if action.nargs == argparse.REMAINDER:
            continue  # another program's command line (record-run -- CMD), whose words are its own
        value = getattr(args, action.dest, None)
        values = value if isinstance(value, list) else [value]
        if action.default != "" and any(v == "" for v in values):
            name = "/".join(action.option_strings) or action.metavar or action.dest
            way_out = "give one, or leave the option out" if action.option_strings else "give one"
            parser.error(f"argument {name}: an empty value (an unset variable?); {way_out}")


def _refuse_names_the_encoding_cannot_hold(command: str, parser: argparse.ArgumentParser,
                                           args: argparse.Namespace) -> None:
    """Under a file-system encoding other than UTF-8 a non-ASCII name a command opens (a set's
    folder, a file) is held as undecodable bytes, which it reported later under a wrong cause
    (a path "not UTF-8", MuJoCo's TypeError): named here, with the cure (exit 2, usage). A
    path is judged as it will be opened: joined to the working folder, its links followed.
    Under a UTF-8 encoding every value's own text is judged (bytes not UTF-8): a label or
    name went into the records as a lone surrogate, which strict JSON readers refuse."""
    utf8 = encoding_holds_any_name()
    for action in parser._actions:
        if action.nargs == argparse.REMAINDER:
            continue  # another program's command line (record-run -- CMD), whose words are its own
        value = getattr(args, action.dest, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (str, Path)):
                label = action.option_strings[0] if action.option_strings else (action.metavar or action.dest)
                if problem := unheld_value(command, action, label, item, _names_a_path(action, item), utf8):
                    parser.error(problem)


def _names_a_path(action: argparse.Action, value) -> bool:
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
    try:
        listed = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "--", str(path)], capture_output=True,
                                timeout=60)
    except (OSError, subprocess.SubprocessError, TypeError):
        return 0
    return listed.stdout.count(b"\0") if listed.returncode == 0 else 0


# record-run's folders (the run's, its work folder, its attic, its learning state's): not
# outputs the other checks judge (record-run judges them itself), but written into a run set
# as any output is, so held to the committed, finished and planned sets' rules
_RECORD_RUN_FOLDERS = ("run_dir", "work_dir", "attic", "state_dir")


def _set_writes(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """_given_outputs and record-run's folders: what may land in a run set."""
    yield from _given_outputs(parser, args)
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if action.dest in _RECORD_RUN_FOLDERS and action.option_strings and value:
            yield action.option_strings[0], value, True


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
    for option, value, _ in _set_writes(parser, args):
        try:  # the folder resolved, the name not: an output that is a link is replaced, not written through
            where = Path(value).parent.resolve() / Path(value).name
        except (OSError, RuntimeError):  # a link loop: the command names it
            continue
        # the outermost results/<set> or reports/<set> that holds it: results/S/reports/x is in S
        run_set = next(iter(set_folders(where)), None)
        if run_set is None:
            continue
        if _tracked_under(where):
            parser.error(f"argument {option}: {value} is committed (git tracks it), evidence "
                         "that is not rewritten; write to a new file or folder")
        if run_set != where and _tracked_under(run_set):  # a new file there fails the set's verification
            parser.error(f"argument {option}: {value} is inside {run_set.parent.name}/"
                         f"{run_set.name}, a committed run set (git tracks it), whose evidence is not rewritten "
                         "or added to; write outside it")


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


# Errors of the file system, as a user would say them.
_OS_REASONS = {
    errno.ENOSPC: "no space left on the device (disk full)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "is a directory, not a file",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EEXIST: "already exists (a file where a directory is needed?)",
    errno.EACCES: "permission denied",
    errno.ENOENT: "no such file or directory",
}


def _error_line(name: str, exc: Exception) -> int:
    """Bad input (an unusable file, a full or read-only disk) as one line naming the file and
    the problem, exit 2; anything else as one line too, exit 1 (SACSCALE_TRACEBACK=1 shows
    the traceback, for a bug report)."""
    if os.environ.get("SACSCALE_TRACEBACK") or stop_raised():  # a stop a library made its error: raised as the stop
        raise exc
    gl_problem = mujoco_gl_problem() if isinstance(exc, (ImportError, AttributeError, RuntimeError)) else None
    if gl_problem:  # MuJoCo's import failed on MUJOCO_GL: its value, or its backend's missing library
        message, code = gl_problem, 2
    elif isinstance(exc, (BadInput, GLBackendError)):
        message, code = str(exc), 2
    elif isinstance(exc, OSError):
        reason = _OS_REASONS.get(exc.errno, exc.strerror or str(exc))
        # a write's temporary and its output are one name to the user: said once
        where = " -> ".join(dict.fromkeys(output_name(str(f)) for f in (exc.filename, exc.filename2) if f))
        where = shortened(where) if exc.errno == errno.ENAMETOOLONG else where
        if exc.errno == errno.ENOENT and (gone := _folder_gone(exc.filename)):
            reason += f" ({gone})"
        message, code = f"{where}: {reason}" if where else reason, 2
    elif isinstance(exc, UnicodeDecodeError):
        message, code = f"input is not UTF-8 text (byte {exc.start})", 2
    elif isinstance(exc, RecursionError):
        message, code = "input nested too deep", 2
    elif isinstance(exc, MemoryError):
        message, code = "input too large for memory", 2
    else:
        text = " ".join(str(exc).split())
        message, code = f"{type(exc).__name__}: {text[:300]} (unexpected; SACSCALE_TRACEBACK=1 shows where)", 1
    print(f"sacscale {name}: error: {_printable(message)}", file=sys.stderr)
    return code


def _folder_gone(filename) -> str | None:
    """Which folder is missing: the working folder (removed while the command ran: the start
    checked it), or the file's own, said as missing (a typo as often as a folder removed)."""
    try:
        os.getcwd()
    except OSError:
        return "the working folder was removed while the command ran"
    folder = os.path.dirname(os.fsdecode(filename)) if filename else ""
    return f"its folder {folder} does not exist" if folder and not os.path.lexists(folder) else None


if __name__ == "__main__":
    sys.exit(main())
