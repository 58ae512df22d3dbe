"""Reading a record whole, bounded: a file of gigabytes (a sparse one costs no disk) put
where a record goes must be named, not read into memory until the machine kills us."""

from __future__ import annotations

import json
import os
import re

# The project's records (metrics, plans, reports, manifests) are at most a few MB.
RECORD_LIMIT = 64 << 20


class TooLarge(ValueError):
    """The file holds more than the limit; the message says how much it may hold."""


def read_limited(path: str | os.PathLike, limit: int = RECORD_LIMIT) -> bytes:
    """The bytes of `path`, refused (TooLarge) past `limit` without reading the rest."""
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"larger than {limit >> 20} MB, far more than a record of this project holds")
    return data


class RecordJSONError(json.JSONDecodeError):
    """A record that JSON parses but that readers could read two ways (a key given twice:
    Python keeps the last value, other readers the first) or that Python cannot hold (an
    integer of thousands of digits: ValueError from int(), named by no one)."""

    def __init__(self, msg: str) -> None:
        ValueError.__init__(self, msg)
        self.msg, self.doc, self.pos, self.lineno, self.colno = msg, "", 0, 1, 1


_INT_DIGITS = 100  # a count of bytes or steps has 20 at most


def _unique(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise RecordJSONError(f"the key {key[:60]!r} is given twice (readers differ on which value holds)")
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _INT_DIGITS:
        raise RecordJSONError(f"an integer of {len(text):,} digits (a record holds none past {_INT_DIGITS})")
    return int(text)


# `\ud800`..`\udfff` in JSON: half of a pair, which parses to a string no UTF-8 writer can
# write (the report, the status block, a terminal) unless its other half follows
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def refuse_lone_surrogates(value) -> None:
    """RecordJSONError when a string or key of `value` holds half of a surrogate pair."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo += list(item) + list(item.values())
        elif isinstance(item, list):
            todo += item
        elif isinstance(item, str) and any("\ud800" <= ch <= "\udfff" for ch in item):
            half = next(ch for ch in item if "\ud800" <= ch <= "\udfff")
            raise RecordJSONError(f"a string with a lone surrogate ({half.encode('unicode_escape').decode()}), "
                                  "half of a character that no UTF-8 text can hold")


def _no_constant(name: str):
    raise RecordJSONError(f"holds {name}, which JSON does not define (the project writes none)")


def loads_record(text: str | bytes, finite: bool = False):
    """json.loads for the project's records: a key given twice, an integer too long to read
    or a lone surrogate is refused with a JSONDecodeError (RecordJSONError), as malformed
    JSON is; with `finite`, NaN and Infinity too (a value given on a command line, which a
    record would otherwise carry as null)."""
    constants = {"parse_constant": _no_constant} if finite else {}
    value = json.loads(text, object_pairs_hook=_unique, parse_int=_bounded_int, **constants)
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8", "replace")):
        refuse_lone_surrogates(value)
    return value
