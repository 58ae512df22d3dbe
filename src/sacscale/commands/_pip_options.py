"""The options of a requirements-file line, read as pip reads them.

pip (this follows pip 26.3: the options its requirements-file parser is built with, as
listed under "Requirements File Format" in its documentation, and `--pypi-url`, an alias
of `--index-url` the documentation leaves out) splits a line's options with shlex and
parses them with optparse. optparse takes a long option by any start of it that no other
option shares (`--edit X` is `--editable X`, `--constr=F` is `--constraint F`), its value
after `=` or as the next word, and a short option's value joined to it (`-eX`; `-e=X`
gives the value `=X`); `--` ends the options, and a word between options is ignored.
An option it does not know, or a start several options share, makes pip refuse the file.
"""

from __future__ import annotations

from collections.abc import Iterator

PIP_FOLLOWED = "26.3"  # the pip whose requirements-file options these are
NESTED_FILE = "a requirements file"  # read by pip as one more requirements file
LOCAL_THING = "a project, archive, folder of archives or index"  # a path or URL pip installs from
VALUE = "a value naming nothing to install from"
FLAG = "no value"

# pip's long options in a requirements file and what each one's value is
LONG_OPTIONS = {
    "--index-url": LOCAL_THING, "--pypi-url": LOCAL_THING, "--extra-index-url": LOCAL_THING,
    "--no-index": FLAG, "--constraint": NESTED_FILE, "--requirement": NESTED_FILE,
    "--editable": LOCAL_THING, "--find-links": LOCAL_THING, "--no-binary": VALUE, "--only-binary": VALUE,
    "--prefer-binary": FLAG, "--require-hashes": FLAG, "--no-require-hashes": FLAG, "--pre": FLAG,
    "--all-releases": VALUE, "--only-final": VALUE, "--trusted-host": VALUE, "--use-feature": VALUE,
    "--hash": VALUE, "--config-settings": VALUE,
}
# its short options, each the long one's; every one takes a value
SHORT_OPTIONS = {"-i": "--index-url", "-c": "--constraint", "-r": "--requirement", "-e": "--editable",
                 "-f": "--find-links", "-C": "--config-settings"}
_NOT_JUDGED = "pip would refuse the file, and what it names is not judged here"


class UnreadOption(ValueError):
    """An option pip would not take (unknown, or the start of several), as a phrase."""


def break_line(line: str) -> tuple[str, str]:
    """(the requirement, the options) of a line, as pip parts them: the options start at the
    first word (split at spaces) that starts with `-`."""
    words = line.split(" ")
    first = next((index for index, word in enumerate(words) if word.startswith("-")), len(words))
    return " ".join(words[:first]), " ".join(words[first:])


def option_values(words: list[str]) -> Iterator[tuple[str, str]]:
    """(pip's long option, its value) for each option that takes one in `words`, a
    line's options part split into words; raises UnreadOption at one pip would refuse."""
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word == "--":
            return  # what follows is arguments, which pip ignores on an options part
        if word.startswith("--"):
            name, has_value, value = word.partition("=")
            option = long_option(name)
            if LONG_OPTIONS[option] != FLAG:
                yield option, value if has_value else _next_value(word, rest)
            elif has_value:
                raise UnreadOption(f"{word!r}: pip's {option} takes no value; pip would refuse the file: give it "
                                   "without one")
        elif word.startswith("-") and word != "-":
            if word[:2] not in SHORT_OPTIONS:
                raise UnreadOption(f"{word!r}: {word[:2]} is no option pip reads in a requirements file; "
                                   f"{_NOT_JUDGED}: give one of pip's options")
            yield SHORT_OPTIONS[word[:2]], word[2:] or _next_value(word, rest)


def _next_value(word: str, rest: list[str]) -> str:
    """The next word, the value of the option `word` (pip takes it whatever it starts with)."""
    if not rest:
        raise UnreadOption(f"{word!r}: given no value at the end of the line; pip would refuse the file: give "
                           "the option its value")
    return rest.pop(0)


def long_option(name: str) -> str:
    """pip's long option `name` is, itself or the one option it is the start of."""
    if name in LONG_OPTIONS:
        return name
    starting = sorted(option for option in LONG_OPTIONS if option.startswith(name))
    if len(starting) == 1:
        return starting[0]
    if not starting:
        raise UnreadOption(f"{name!r}: no option pip reads in a requirements file is or starts so; {_NOT_JUDGED}: "
                           "give one of pip's options")
    raise UnreadOption(f"{name!r}: the start of {len(starting)} of pip's options ({', '.join(starting)}); "
                       f"{_NOT_JUDGED}: write the option in full")
