"""The progress options of the commands that read a whole set for many seconds (verify,
report): stage lines on stderr where someone watches, never on stdout, whose lines scripts
and tests read."""

from __future__ import annotations

import argparse
import sys

from sacscale.usage import StageLines


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--progress", action="store_true",
                       help="say each stage on stderr as it starts (and, in a long one, which run every second or "
                            "so), also where stderr is not a terminal (a log); on a terminal they are said by default")
    shown.add_argument("--quiet", action="store_true", help="no progress lines, on a terminal either")


def stage_lines(command: str, args: argparse.Namespace) -> StageLines:
    return StageLines(f"sacscale {command}", _shown(args))


def _shown(args: argparse.Namespace) -> bool:
    """Where someone watches (stderr a terminal) unless --quiet, anywhere with --progress: a
    script that reads a command's problems on stderr, or a log, gets them as before."""
    if args.progress or args.quiet:
        return args.progress
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a stream that is no terminal's, or one closed
        return False
