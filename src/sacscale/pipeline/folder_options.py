"""record-run's folder options (`--run-dir`, `--work-dir`, `--attic`, `--state-dir`) as paths,
and the checks of a path value every output option shares.

Typed as plain `Path`, an empty value (`--attic "$ATTIC"` with the variable unset) was the
current folder (`Path('') == Path('.')`): a failed attempt was moved into the working folder,
and a refusal named `.`, which the user never typed. A blank one (`--attic "$UNSET "`) made a
folder named ` ` there, and the message moving an attempt into it read as a move to the root.
The other commands refuse an empty value (sacscale.cli); these are checked as argparse reads
them, so the workflow's own entry point (run_training.py) refuses them too. So is a path too
long to open (refused later by a `stat`, naming no option and echoing thousands of
characters) or too long for what the command makes from it (sacscale.pipeline.made_room), a
part the write would make that is blank or shows as nothing (`DIR/$UNSET /e.json` made a
folder ` `), and a folder named, or made on the way, as a lock file or as record-run's work
folder (sacscale.lock_names): made there, it would stand where another command's lock is taken.
"""

from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

from sacscale.lock_names import lock_name_problem, made_parts
from sacscale.long_names import too_long_problem


def blank_value(value: str) -> str | None:
    """What an empty or whitespace-only value is, said for the user; None for any other."""
    if value == "":
        return "an empty value (an unset variable?)"
    return f"a blank value {value!r} (whitespace only: an unset variable and a space?)" if value.isspace() else None


def _unseen(name: str) -> bool:
    """Whether a name shows as nothing: white space, characters that print no mark (a no-break
    space, a zero-width one, a control character), combining marks with nothing to sit on,
    unassigned code points (U+2065: terminals and fonts draw them as nothing) and the few
    letters and symbols drawn as a blank (_BLANK_LETTERS)."""
    return all(ch.isspace() or ch in _BLANK_LETTERS or unicodedata.category(ch) in _UNSEEN for ch in name)


# Unicode's separators, format and control characters print no mark; nonspacing and enclosing
# marks (Mn, Me) draw only on the character before them, and a name of marks alone has none;
# an unassigned code point (Cn) has no glyph to draw
_UNSEEN = {"Zs", "Zl", "Zp", "Cf", "Cc", "Mn", "Me", "Cn"}
# Letters and a symbol that are drawn as an empty cell, though their categories are those of
# visible ones (Lo, So): the Hangul fillers (choseong, jungseong, the compatibility one and
# its halfwidth form), the blank braille pattern and the musical null notehead
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")


def blank_part_problem(value: str) -> str | None:
    """Why a part of `value` the write would make is refused: blank (`DIR/$UNSET /e.json` made
    a folder named ` `) or only characters that show as nothing; None where none is."""
    for _, part in made_parts(value):
        if _unseen(part.name):
            # ascii: a blank letter or a mark repr leaves as it is would show as nothing here too
            return (f"{value!r}: its part {ascii(part.name)} would be made, and that name is blank (white space or "
                    "invisible characters only: an unset variable and a space?); give it a name")
    return None


def path_value_problem(value: str, work_folder: bool = False, room: int = 0, made: str = "") -> str | None:
    """Why an output's path (a file or a folder) is refused before anything is made: blank (the
    whole, or a part it would make), too long (itself, or for `made`, the longest path the
    command makes from it, `room` bytes longer), or named (or making a folder on the way) as a
    lock file or a work folder of record-run's (`work_folder`: record-run's own, which has that
    form); None where it may be written."""
    if blank := blank_value(value):
        return f"{blank}; give a name"
    if problem := blank_part_problem(value):
        return problem
    if problem := too_long_problem(value, room, made):
        return problem
    if problem := lock_name_problem(value, work_folder):
        return f"{value}: {problem}"
    return None


def folder_path(value: str, way_out: str = "give one", work_folder: bool = False) -> Path:
    """argparse's type for a required folder option: the path, or an error naming the problem."""
    if blank := blank_value(value):
        raise argparse.ArgumentTypeError(f"{blank}; {way_out}")
    if problem := path_value_problem(value, work_folder):
        raise argparse.ArgumentTypeError(problem)
    return Path(value)


def work_folder_path(value: str) -> Path:
    """folder_path for record-run's --work-dir, which the pipeline names `.<run>.partial`."""
    return folder_path(value, work_folder=True)


def optional_folder_path(value: str) -> Path:
    """folder_path for an option that may be left out."""
    return folder_path(value, "give one, or leave the option out")
