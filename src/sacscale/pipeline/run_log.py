"""Where the run wrapper's (sacscale.pipeline.run_record) whole output goes, and how it says
its own messages.

The run's log (`logs/<set>/train/<run>.log`, `record-run --log`) is opened by the wrapper once
it holds the run's locks, not by the shell or Snakemake before it starts: a second invocation
of the same run is refused by those locks and leaves the first's log as it is, where the
rule's shell redirection truncated it before the refusal was reached. (Snakemake itself
removes a rule's `log:` before its job: under `--nolock` that is the first's copy; the run's
own train.log keeps the trainer's output.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sacscale.pipeline.set_folders import file_error_line, open_new_log

PREFIX = "run_training"


def say(message: str) -> None:
    """One of the wrapper's own messages: into the full output (stdout, the run's log) and onto
    the terminal (stderr); once where both are one file (a terminal, `2>&1`)."""
    for stream in (sys.stdout,) if _one_file(sys.stdout, sys.stderr) else (sys.stdout, sys.stderr):
        try:
            print(f"{PREFIX}: {message}", file=stream, flush=True)
        except OSError:
            pass


def _one_file(first, second) -> bool:
    try:
        one, two = os.fstat(first.fileno()), os.fstat(second.fileno())
    except (AttributeError, OSError, ValueError):  # closed, or no descriptor (a test's capture)
        return False
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def output_to_log(path: Path) -> str | None:
    """This process's stdout (where the trainer's output is copied) pointed at a new log file at
    `path`, its folder made when missing, whatever stood at its name removed, never followed
    (set_folders.open_new_log); None once done, else why not as `PATH: why`."""
    if os.path.lexists(path.parent) and not path.parent.is_dir():
        return f"{path.parent}: not a folder, where the log's folder stands"
    try:
        sys.stdout.flush()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open_new_log(path) as log:
            os.dup2(log.fileno(), sys.stdout.fileno())
    except (OSError, AttributeError, ValueError) as exc:  # stdout closed: said as the log's problem
        return file_error_line(exc, path) if isinstance(exc, OSError) else f"{path}: standard output is closed"
    return None
