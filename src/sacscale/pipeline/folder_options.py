"""record-run's folder options (`--run-dir`, `--work-dir`, `--attic`, `--state-dir`) as paths.

Typed as plain `Path`, an empty value (`--attic "$ATTIC"` with the variable unset) was the
current folder (`Path('') == Path('.')`): a failed attempt was moved into the working folder,
and a refusal named `.`, which the user never typed. The other commands refuse an empty
value (sacscale.cli); these are checked as argparse reads them, so the workflow's own entry
point (run_training.py) refuses them too. So is a folder named as a lock file
(sacscale.lock_names): made there, it would stand where another command's lock is taken.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sacscale.lock_names import lock_name_problem


def folder_path(value: str, way_out: str = "give one") -> Path:
    """argparse's type for a required folder option: the path, or an error naming the problem."""
    if value == "":
        raise argparse.ArgumentTypeError(f"an empty value (an unset variable?); {way_out}")
    if problem := lock_name_problem(value):
        raise argparse.ArgumentTypeError(f"{value}: {problem}")
    return Path(value)


def optional_folder_path(value: str) -> Path:
    """folder_path for an option that may be left out."""
    return folder_path(value, "give one, or leave the option out")
