"""The parser every command line of the project is read with."""

import argparse


class UsageParser(argparse.ArgumentParser):
    """A command's parser whose usage error is one line, as every other refusal (argparse
    prints its usage lines above it); `--help` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def printable(text: str) -> str:
    """Control characters (a file name's escape sequences, a newline) shown escaped, not sent
    to the terminal, where they could forge or hide lines."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
