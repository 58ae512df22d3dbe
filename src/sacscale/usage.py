"""The parser every command line of the project is read with."""

import argparse


class UsageParser(argparse.ArgumentParser):
    """A command's parser whose usage error is one line, as every other refusal (argparse
    prints its usage lines above it); `--help` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")
