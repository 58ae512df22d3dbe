"""The parser every command line of the project is read with, and how a command prints a
line that holds outside text (a file or folder name, a record's value)."""

import argparse
import contextlib
import io
import sys
import time


class UsageParser(argparse.ArgumentParser):
    """A command's parser whose usage error is one line, as every other refusal (argparse
    prints its usage lines above it); `--help` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {printable(message)}\n")  # the message may quote the value given


def printable(text: str) -> str:
    """Control characters (a file name's escape sequences, a newline) shown escaped, not sent
    to the terminal, where they could forge or hide lines. An undecodable byte of a name (a
    lone surrogate, `\\udcff`) is shown as the shell writes it, `\\xff`."""
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def _escaped(char: str) -> str:
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return f"\\x{ord(char) - 0xDC00:02x}"
    return repr(char)[1:-1]


def say(line: str, file=None) -> None:
    """Print one line of a command's outcome (a problem, a note, what it wrote) with its
    control characters escaped: a newline or carriage return in a name or a record's text
    would otherwise write lines of its own (sacscale.cli escapes only terminal escapes,
    since a progress bar needs its carriage returns)."""
    print(printable(line), file=file or sys.stdout)


def escape_what_the_encoding_cannot_hold() -> None:
    """Make stdout and stderr write a character their encoding cannot hold (`…` under an
    ASCII locale) as an escape (`\\u2026`): printed after a command's work, it raised
    UnicodeEncodeError and failed the command with its outputs written. Called once where a
    process starts (the CLI, a spawned rank or collector)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(errors="backslashreplace")


class StageLines:
    """A long command's progress on stderr, so that its outcome on stdout stays as it was:
    one line as each stage starts, and within a stage of slow items (a run's metrics) a
    count, at most one line every `every_s` seconds. Off (`shown` false) it prints nothing."""

    def __init__(self, command: str, shown: bool, every_s: float = 1.0) -> None:
        self.command, self.shown, self.every_s = command, shown, every_s
        self._last = time.monotonic()

    def stage(self, text: str) -> None:
        self._line(text)

    def item(self, text: str) -> None:
        """The next item of a stage starts (`run 3/10: NAME`): said only once `every_s` passed
        since the last line, so that a stage of quick items says nothing more."""
        if time.monotonic() - self._last >= self.every_s:
            self._line(text)

    def _line(self, text: str) -> None:
        if self.shown:
            say(f"{self.command}: {text}", file=sys.stderr)
            sys.stderr.flush()  # a pipe (`2>&1 | tee`) holds the line back otherwise
        self._last = time.monotonic()


SILENT = StageLines("", shown=False)
