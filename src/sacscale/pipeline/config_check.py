"""Config files and values checked before the schema sees them.

The schema (workflow/schemas/config.schema.yaml) checks shapes; what it cannot see is
checked here, first, so that a bad file is one line naming it and the key:

* a config file another user owns or may write is refused: Snakemake has already taken it
  as this user's own (with `__use_yte__`, run its expressions as this user's code); so is
  one in a folder where another user may rename entries (its own, or one above it): they
  could swap a file of theirs in at its name while Snakemake read it, and back after. Its
  name is judged as the kernel walks it (sacscale.pipeline.walked_names): a folder left by
  `..` is entered first, so one of another user's on the way is refused too;
* a config file is read with a size limit, as UTF-8, and parsed again here (Snakemake has
  already loaded it, but silently keeps the last of two equal keys and expands YAML
  aliases, which can make a few hundred bytes stand for a billion values that the schema
  check would then take minutes to walk and format): duplicate keys and more than a few
  aliases are errors;
* one list has at most MAX_ITEMS items, counted while the file is parsed (a 500 KB list
  took minutes to parse, check and format on a loaded machine; now parsing stops there);
* every value: no more than MAX_VALUES of them (aliases or not), nested at most
  MAX_DEPTH deep, every number finite, every string (and key) short and free of control
  characters (a newline in a name would split the shell commands built from it).
Every file name in a message is shown with its control characters escaped.
"""

from __future__ import annotations

import json
import math
import os
import re
import select
import stat
import time
from collections.abc import Iterable
from pathlib import Path

import yaml

from sacscale.atomic import others_can_write_file, refuse_foreign_links, swappable_by_others
from sacscale.pipeline.walked_names import hop_folders, lies_inside
from sacscale.report.text import BLANK_LETTERS
from sacscale.usage import printable

MAX_FILE_BYTES = 1 << 20      # a config file is a few KB; a recorded matrix tens of KB
MAX_ALIASES = 64              # YAML anchors referenced: a config needs none or a few
MAX_VALUES = 100_000          # every scalar, list and mapping of a config, aliases expanded
MAX_ITEMS = 4096              # one list: a config's are tens long (order: at most 64)
MAX_DEPTH = 32
MAX_STRING = 4096             # fits a path (PATH_MAX)
STREAM_WAIT_S = 30.0
# control characters, and the invisible ones that change how text shows (bidirectional
# overrides such as U+202E, zero-width characters, line and paragraph separators): a
# description or name that reads one way in the report and the terminal and is another
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                      r"\ufff9-\ufffb" + BLANK_LETTERS + "]")


class ConfigError(ValueError):
    """A config file or value that cannot be used; the message names the file or key."""


# --- files ---------------------------------------------------------------------------

def read_text(path: str | os.PathLike, what: str, limit: int = MAX_FILE_BYTES, streams: bool = False,
              wait_s: float = STREAM_WAIT_S) -> str:
    """The file's text, at most `limit` bytes of UTF-8. A plain file only, unless `streams`
    (a pipe such as `<(lscpu -e)`, which is then read for at most `wait_s` seconds): a
    device such as /dev/zero never ends and a FIFO may never be written. Errors name
    `what` and the file."""
    _refuse_foreign_links(path, what)  # root would show them a file only root can read
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO's open must not block
    except OSError as exc:
        raise ConfigError(f"{what} {_named(path)}: cannot read it ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{what} {_named(path)}: is a directory, not a file")
        if not (stat.S_ISREG(mode) or (streams and stat.S_ISFIFO(mode))):
            raise ConfigError(f"{what} {_named(path)}: not a plain file" + (" or a pipe" if streams else ""))
        data = _read_bounded(fd, limit, wait_s, what, path)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ConfigError(f"{what} {_named(path)}: larger than {limit // 1024} KB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {_named(path)}: not UTF-8 text (byte {exc.start})") from None


def _refuse_foreign_links(path: str | os.PathLike, what: str) -> None:
    """ConfigError where the name `path` leads through another user's symbolic link."""
    try:
        refuse_foreign_links(path, reading=True)
    except OSError as exc:
        where = "" if Path(exc.filename) == Path(os.getcwd(), path) else f"{_named(exc.filename)}: "
        raise ConfigError(f"{what} {_named(path)}: {where}{exc.strerror}") from None


def _read_bounded(fd: int, limit: int, wait_s: float, what: str, path) -> bytes:
    """At most limit + 1 bytes, within wait_s seconds (a pipe whose writer stalls)."""
    chunks, size, deadline = [], 0, time.monotonic() + wait_s
    while size <= limit:
        try:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConfigError(f"{what} {_named(path)}: nothing more to read for {wait_s:.0f} s") from None
            select.select([fd], [], [], min(left, 1.0))
            continue
        except OSError as exc:
            raise ConfigError(f"{what} {_named(path)}: cannot read it ({exc.strerror or exc})") from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _unique_pairs(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ConfigError(f"duplicate key {_shown(key)}")
        seen[key] = value
    return seen


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and counts alias references."""

    def __init__(self, stream):
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent, index):
        if isinstance(parent, yaml.SequenceNode) and index >= MAX_ITEMS:
            raise ConfigError(f"line {self.peek_event().start_mark.line + 1}: a list of more than {MAX_ITEMS} items")
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise ConfigError(f"line {mark.line + 1}: more than {MAX_ALIASES} YAML aliases (a config needs a few "
                                  "at most; many expand to a huge document)")
        return super().compose_node(parent, index)

    def construct_yaml_int(self, node):
        _refuse_old_number_forms(node)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):
        _refuse_old_number_forms(node)
        return super().construct_yaml_float(node)

    def construct_mapping(self, node, deep=False):
        keys = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in keys
            except TypeError:  # an unhashable key: the base class names it
                break
            if duplicate:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key {_shown(key)}")
            keys.add(key)
        return super().construct_mapping(node, deep)


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_yaml_float)


def _refuse_old_number_forms(node) -> None:
    """YAML 1.1 reads `010` as 8 (base 8) and `1:30` as 90 (base 60): a value that means
    something else than it shows is refused, naming its line."""
    digits = node.value.replace("_", "").lstrip("+-")
    base_8 = len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()
    if base_8 or ":" in digits:
        raise ConfigError(f"line {node.start_mark.line + 1}: {_shown(node.value)} is read by YAML as a "
                          f"base-{8 if base_8 else 60} number; write it in decimal, or quote it for text")


def parse(text: str):
    """JSON (what Snakemake tries first), else YAML; strict about keys and aliases."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except ConfigError:
        raise
    except RecursionError:
        raise ConfigError(f"nested more than {MAX_DEPTH} deep") from None
    except ValueError:
        pass
    try:
        return yaml.load(text, Loader=_StrictLoader)  # safe: a SafeLoader subclass
    except RecursionError:
        raise ConfigError(f"nested more than {MAX_DEPTH} deep") from None
    except ConfigError:
        raise
    except ValueError as exc:  # an integer of more than 4300 digits (Python's conversion limit)
        raise ConfigError(f"not a usable value ({' '.join(str(exc).split()[:8])}...)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise ConfigError(f"{where}not valid YAML ({getattr(exc, 'problem', None) or 'syntax'})") from None


def _named(path) -> str:
    """A file's name for a message: its escape sequences shown, not sent to the terminal."""
    return printable(os.fspath(path))


def check_file(path: str | os.PathLike, what: str = "config file"):
    """The file's parsed, checked contents; ConfigError names the file and the problem."""
    text = read_text(path, what)  # first: a device or a folder is named as such
    refuse_others_file(path, what)
    try:
        data = parse(text)
        check_values(data)
    except ConfigError as exc:
        raise ConfigError(f"{what} {_named(path)}: {exc}") from None
    return data


def refuse_others_file(path: str | os.PathLike, what: str = "config file",
                       taken_as: str = "a config file is taken as this user's own instructions (and run as "
                                       "code with __use_yte__)",
                       swapped_when: str = "while Snakemake read it") -> None:
    """ConfigError if another user owns the file or may change it, or may rename entries in
    its folder or one above it (then they could have swapped a file of theirs in while
    Snakemake read it, and ours back for this check): Snakemake has read it as this user's
    own instructions. `taken_as` says why that matters, `swapped_when` when a swap would
    count (a file read later, not by Snakemake), for the message."""
    _refuse_foreign_links(path, what)  # again: a link of theirs swapped in since it was read
    try:
        problem = others_can_write_file(os.stat(path), os.fspath(path))
        in_folder = None if problem else _swappable_folder(path)
    except OSError as exc:  # it was read (read_text): something on the way changed since
        raise ConfigError(f"{what} {_named(path)}: cannot be looked at after it was read ({exc.strerror}), "
                          f"so who could have changed it cannot be judged; {taken_as}: use a copy of your "
                          "own, in a folder only you (or root) can change") from None
    if problem:
        raise ConfigError(f"{what} {_named(path)}: {problem}; {taken_as}: use a copy of your own, closed "
                          "to others (chmod go-w)")
    if in_folder:
        raise ConfigError(f"{what} {_named(path)}: lies in {in_folder}: another user could swap a file "
                          f"of theirs in at its name {swapped_when}; {taken_as}: use a copy of "
                          "your own, in a folder only you (or root) can change")


def _swappable_folder(path: str | os.PathLike) -> str | None:
    """Where another user may rename entries on the way to the file `path` (as written, and
    at each link it leads through), as "FOLDER, which WHY" for a message; None where no one
    else may. A sticky folder such as /tmp passes: there only a file's owner may rename it.
    Each folder is walked to as the kernel walks it: one left by `..` is entered first."""
    for folder in hop_folders(path):
        found = swappable_by_others(folder)
        if found:
            above, why = found
            how = "inside" if above is None or lies_inside(folder, above) else "reached through"
            inside = "" if above is None else f", {how} {_named(above)}"
            return f"{_named(folder)}{inside}, which {why}"
    return None


def check_files(paths: Iterable[str | os.PathLike]) -> None:
    for path in paths:
        check_file(Path(path))


# --- values ----------------------------------------------------------------------------

def _shown(value) -> str:
    """A value for a message: repr (control characters escaped), cut to 80 characters."""
    text = repr(value) if isinstance(value, str) else type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


def check_string(text: str, where: str) -> None:
    """ConfigError if `text` is too long or holds a control, bidi or invisible character."""
    if len(text) > MAX_STRING:
        raise ConfigError(f"{where}: longer than {MAX_STRING} characters")
    bad = _CONTROL.search(text)
    if bad:
        char = bad.group()
        shown = repr(char) if char.isascii() or not char.isprintable() else f"U+{ord(char):04X}"
        what = "a control character" if char < "\xa0" else "an invisible formatting character"
        raise ConfigError(f"{where}: holds {what} ({shown}) in {_shown(text)}")


def check_list_lengths(data, where: str = "config") -> None:
    """ConfigError if a list of `data` has more than MAX_ITEMS items; the walk visits at most
    MAX_VALUES containers (the rest is check_values's), so it is quick on anything."""
    budget, todo = MAX_VALUES, [(data, where)]
    while todo and budget > 0:
        value, path = todo.pop()
        budget -= 1
        if isinstance(value, dict):
            todo.extend((item, f"{path}.{key}" if path != where else str(key)) for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            if len(value) > MAX_ITEMS:  # keys not yet checked: their escapes shown
                raise ConfigError(f"{printable(path)}: a list of {len(value)} items, more than {MAX_ITEMS}")
            todo.extend((item, f"{path}[{i}]") for i, item in enumerate(value))


def check_values(data, where: str = "config") -> None:
    """Every value of `data` (a loaded config): counted, depth-limited, numbers finite,
    strings and keys short and free of control characters. Shared subtrees (YAML aliases)
    count as often as they are used, and the walk stops at the limit: it is quick."""
    budget = [MAX_VALUES]

    def walk(value, path: str, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise ConfigError(f"{where}: more than {MAX_VALUES} values (YAML aliases that expand?)")
        if depth > MAX_DEPTH:
            raise ConfigError(f"{path}: nested more than {MAX_DEPTH} deep")
        if isinstance(value, dict):
            for key, item in value.items():
                key_text = str(key)
                check_string(key_text, f"{path}: key")
                walk(item, f"{path}.{key_text}" if path != where else key_text, depth + 1)
        elif isinstance(value, (list, tuple)):
            if len(value) > MAX_ITEMS:
                raise ConfigError(f"{path}: a list of {len(value)} items, more than {MAX_ITEMS}")
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]", depth + 1)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{path}: {value} is not a finite number{_overflow_hint(value)}")
        elif isinstance(value, str):
            check_string(value, path)

    walk(data, where, 0)


def _overflow_hint(value: float) -> str:
    """Snakemake reads a `--config` number too large for a float (1e400, or an integer of
    more than 4300 digits, which int() refuses) as inf: say so, or the user sees a value
    they never typed."""
    if math.isinf(value):
        return " (a number too large for a float, e.g. 1e400 or an integer of thousands of digits, reads as inf)"
    return ""


def read_json(path: str | os.PathLike, what: str, limit: int = MAX_FILE_BYTES, taken_as: str | None = None):
    """A JSON file (e.g. a recorded matrix), with the same limits as a config file; with
    `taken_as` (why it matters, for the message), held to a config file's rule of who else
    may change it (refuse_others_file)."""
    text = read_text(path, what, limit)
    if taken_as is not None:
        refuse_others_file(path, what, taken_as)
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
        check_values(data, "value")
    except RecursionError:
        raise ConfigError(f"{what} {_named(path)}: nested too deep") from None
    except ConfigError as exc:
        raise ConfigError(f"{what} {_named(path)}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{what} {_named(path)}: not JSON ({exc})") from None
    return data
