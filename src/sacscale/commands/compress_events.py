"""`sacscale compress-events ROOT`: store a verified run set's event files gzip-compressed,
leaving its manifest as it is.

TensorBoard event files are most of a run set's bytes and compress about 4x. Each plain
event file under ROOT becomes `NAME.gz` (deterministic: no name or time in the header),
checked to decompress to the same bytes before the plain file is removed. The manifest
still lists `NAME` with its original SHA-256, and `sacscale verify` checks what `NAME.gz`
decompresses to against it; the strict event reader reads `NAME.gz` as `NAME`, so every
metric recomputes as before. No new hash is trusted: a set whose files do not verify
first is refused and left untouched.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sacscale.analysis.events import EventFileError, compress_event_tree
from sacscale.evidence.manifest import ManifestError
from sacscale.evidence.verify import verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", help="evidence root (results/<run set>) with its MANIFEST.sha256")


def _files_problems(root: Path) -> list[str]:
    result = verify(root, recompute=False)  # the files against the manifest only
    return result.problems()


def run(args: argparse.Namespace) -> int:
    root = Path(args.root)
    name = "sacscale compress-events"
    try:
        problems = _files_problems(root)
    except ManifestError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    if problems:
        print(f"{name}: {root}: its files do not verify against its manifest; nothing was compressed:",
              file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 1
    try:
        packed = compress_event_tree(root)
    except (OSError, EventFileError) as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    if not packed:
        print(f"{root}: no plain event file; nothing to do")
        return 0
    before = sum(size for _, size in packed)
    after = sum(path.stat().st_size for path, _ in packed)
    problems = _files_problems(root)
    if problems:  # cannot happen for a lossless copy; said loudly if it ever does
        print(f"{name}: {root}: after compressing, its files no longer verify:", file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{root}: {len(packed)} event file(s) stored gzip-compressed, {before:,} -> {after:,} bytes; "
          f"the manifest is unchanged and its files verify")
    return 0
