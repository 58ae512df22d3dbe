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
import sys
from pathlib import Path
from sacscale import __version__
from sacscale.atomic import output_name
from sacscale.commands import BadInput
from sacscale.commands._output_checks import names_a_path, refuse_bad_outputs
from sacscale.eval.gl_backend import GLBackendError, mujoco_gl_problem
from sacscale.stopping import Interrupted, ended_by_stop, raised_as_interrupted, stop_raised
from sacscale.commands._value_kinds import parsed_value_problem, unheld_value
from sacscale.held_names import encoding_holds_any_name, shown_name
from sacscale.long_names import shortened
from sacscale.pipeline.inherited_caches import InheritedCacheError, check_inherited_caches
from sacscale.pipeline.machine_lock import LockError, hand_run_hold
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
    # before the command's module is imported: importing torch's compiler makes the Inductor
    # cache folder, and Python takes bytecode from its cache prefix at every later import
    try:
        check_inherited_caches()
    except InheritedCacheError as exc:
        print(f"sacscale {name}: error: {_printable(str(exc))}", file=sys.stderr)
        return 2
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
    refuse_bad_outputs(name, cmd_parser, args)
    if name in _MUJOCO_IN_CHILDREN and (gl_problem := mujoco_gl_problem()):
        print(f"sacscale {name}: error: {_printable(gl_problem)}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as held:
        if name in _ON_THE_MACHINE and (refused := _hold_the_machine(held, name)):
            return refused
        try:
            return int(module.run(args) or 0)
        except Exception as exc:  # noqa: BLE001 - one line instead of a traceback (docs/faults.md)
            return _error_line(name, exc)


# commands that train or measure on this machine's CPUs and GPUs: run by hand, each holds the
# machine's training lock shared (beside each other, never beside a measured pipeline run);
# only this top-level process holds it, the ranks and collectors it starts are covered by it.
# evaluate, render and render-best stay out: one invocation's evaluation runs while another's
# run measures (evaluation and rendering are not serialised), and must not fail for that
_ON_THE_MACHINE = {"train", "train-reference", "probe", "env-bench", "learner-bench", "solver-study"}


def _hold_the_machine(held: contextlib.ExitStack, name: str) -> int | None:
    """None once held (until `held` closes), else 2 after one line naming the holder."""
    try:
        held.enter_context(hand_run_hold(name))
    except LockError as exc:  # a measured run holds it, or the lock folder's setting cannot be used
        print(f"sacscale {name}: error: {_printable(str(exc))}", file=sys.stderr)
        return 2
    return None


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
                if problem := unheld_value(command, action, label, item, names_a_path(action, item), utf8):
                    parser.error(problem)


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
        # a write's temporary and its output are one name to the user: said once; a name
        # given as bytes is said as text, not as Python's b'...'
        names = (os.fsdecode(f) if isinstance(f, bytes) else str(f) for f in (exc.filename, exc.filename2) if f)
        where = " -> ".join(dict.fromkeys(output_name(n) for n in names))
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
