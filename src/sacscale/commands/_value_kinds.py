"""What each command-line value is, for the rule on bytes that are not UTF-8
(sacscale.held_names): the cause and the cure differ by kind, and a file name no record holds
is no concern of the rule at all."""

import argparse
import itertools
from pathlib import Path

from sacscale.held_names import unheld_name_problem, unheld_path_problem, unheld_text_problem

# file names a command opens or writes but writes into no record: any bytes open, so they are
# accepted as given (verify's result file and the manifest it reads are named by the user only)
UNRECORDED_FILES = {("verify", "output"), ("verify", "manifest")}

# values that are not names: text the command parses (a device list, CPU ids, a variable for
# the run's environment, a seed), which is typed again, never renamed
NOT_NAMES = {"devices", "device", "collector_cpu_ids", "learner_cpu_ids", "cpu_ids", "threads", "seed", "env",
             "require_commands", "pool_cores", "at_env_steps", "expect_sha256", "num_envs", "steps", "seconds",
             "settle_s", "half_width"}


def unrecorded_file(command: str, action: argparse.Action) -> bool:
    return (command, action.dest) in UNRECORDED_FILES


def not_a_name(action: argparse.Action) -> bool:
    """A value the command parses: listed, a number or another converted value (argparse's
    `type`), or one of fixed choices."""
    return (action.dest in NOT_NAMES or action.choices is not None
            or action.type not in (None, str, Path))


def value_tokens(parser: argparse.ArgumentParser, argv: list[str]):
    """(action, value) for each option value on the command line that argparse converts or
    matches against choices: judged before parsing, which would show `\\xff` as `'\\udcff'`
    in its own "invalid int value" line. An option of several values (`--modes a b`) has
    each of the words after it up to the next option."""
    options = parser._option_string_actions
    for index, token in enumerate(argv):
        name, equals, given = token.partition("=")
        if token == "--":
            return
        if equals and name in options:
            yield options[name], given
        elif token in options and options[token].nargs is None and index + 1 < len(argv):
            yield options[token], argv[index + 1]
        elif token in options and options[token].nargs in ("+", "*"):
            for word in itertools.takewhile(lambda word: not word.startswith("-"), argv[index + 1:]):
                yield options[token], word


def parsed_value_problem(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    for action, given in value_tokens(parser, argv):
        if not_a_name(action) and (problem := unheld_text_problem(action.option_strings[0], given, False)):
            return problem
    return None


def unheld_value(command: str, action: argparse.Action, label: str, item, is_path: bool, utf8: bool) -> str | None:
    """Why the value `item` of `action` cannot be held as text, by its kind; None if it can,
    or if no record holds it."""
    if unrecorded_file(command, action):
        return None
    if not_a_name(action):
        return unheld_text_problem(label, item, recorded=False)
    if not is_path:  # free text a record holds: a label, a setting
        return unheld_text_problem(label, item, recorded=True)
    return unheld_path_problem(label, item) if not utf8 else unheld_name_problem(label, item)
