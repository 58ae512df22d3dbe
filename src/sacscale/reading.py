"""Reading a record whole, bounded: a file of gigabytes (a sparse one costs no disk) put
where a record goes must be named, not read into memory until the machine kills us."""

from __future__ import annotations

import os

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
