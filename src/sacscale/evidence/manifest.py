"""SHA-256 manifest of a run set's evidence, in `sha256sum` format.

`MANIFEST.sha256` lists `<hex>  <path>` (two spaces: text mode, as `sha256sum` writes
it) for every file under the run set's root, paths relative to that root, sorted, so
`cd results/S && sha256sum -c MANIFEST.sha256` checks it without this package. A small
JSON next to it gives counts and sizes. The manifest's own files and the verification
result are not listed (they are written after, or from, the manifest).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from pathlib import Path

from sacscale import hashes
from sacscale.atomic import atomic_write_text, write_json
from sacscale.held_names import unheld_name_problem
from sacscale.long_names import NAME_BYTES, PATH_BYTES, shortened
from sacscale.reading import TooLarge, read_limited

MANIFEST_NAME = "MANIFEST.sha256"
MANIFEST_JSON = "manifest.json"
VERIFY_JSON = "verify.json"
EXCLUDED = frozenset({MANIFEST_NAME, MANIFEST_JSON, VERIFY_JSON})


class ManifestError(ValueError):
    pass


def sha256_file(path: str | Path) -> str:
    """sacscale.hashes.sha256_file, its refusal of a link or a non-regular file raised as
    the ManifestError the evidence layer's callers catch."""
    try:
        return hashes.sha256_file(path)
    except hashes.NotARegularFile as exc:
        raise ManifestError(str(exc)) from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "symbolic link"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def irregular_files(root: str | Path) -> list[str]:
    """`["rel/path (kind)", ...]`: every symbolic link (to a file or a directory, dangling
    or not) and every entry that is neither a directory nor a regular file under root.
    lstat only: nothing is followed or opened. A root that is itself a link is listed as '.'."""
    root = Path(root)
    if root.is_symlink():
        return [". (symbolic link)"]
    out = []
    stack = [root]
    while stack:
        here = stack.pop()
        with os.scandir(here) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = Path(entry.path).relative_to(root).as_posix()
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    stack.append(Path(entry.path))
                elif not stat.S_ISREG(mode):
                    out.append(f"{rel} ({_kind(mode)})")
    return sorted(out)


# what str.splitlines() breaks a line at: a name holding one would split its manifest line
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _name_problem(root: Path, rel: str) -> str | None:
    """Why a file's name cannot be a manifest line's (None when it can), the file named: a
    line break or a backslash (sha256sum escapes those), or bytes that are not UTF-8 (the
    manifest is), shown as the shell writes them, with the cure."""
    if "\\" in rel or not _LINE_BREAKS.isdisjoint(rel):
        return (f"{root}/{rel!r}: file names with line breaks or backslashes are not supported (sha256sum would "
                "escape them)")
    problem = unheld_name_problem("the file", rel)
    return problem and f"{root}: {problem}"


def evidence_files(root: str | Path, excluded: frozenset[str] = EXCLUDED) -> list[str]:
    """Every regular file under `root` (relative POSIX paths, sorted), minus `excluded`
    (names at the top level of root). Symbolic links of any kind and special files (FIFOs,
    sockets, devices) are refused before any file is opened: evidence must be real files."""
    root = Path(root)
    if root.is_symlink():
        raise ManifestError(f"{root}: evidence root is a symbolic link (name the set's directory itself)")
    if not root.is_dir():
        try:
            what = f"not a directory ({_kind(root.stat().st_mode)})"
        except OSError:
            what = "missing"
        raise ManifestError(f"{root}: evidence root is {what}")
    bad = irregular_files(root)
    if bad:
        raise ManifestError(f"{root}: not evidence (only regular files and directories are): " + "; ".join(bad))
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel in excluded:
                continue
            problem = _name_problem(root, rel)
            if problem:
                raise ManifestError(problem)
            out.append(rel)
    return sorted(out)


def build(root: str | Path) -> list[tuple[str, str, int]]:
    """`[(sha256, relative path, size), ...]` over the evidence files under root."""
    root = Path(root)
    return [(sha256_file(root / rel), rel, (root / rel).stat().st_size) for rel in evidence_files(root)]


def format_manifest(entries: list[tuple[str, str, int]]) -> str:
    return "".join(f"{digest}  {rel}\n" for digest, rel, _ in entries)


def _too_long(path: str) -> bool:
    whole = os.fsencode(path)
    return len(whole) >= PATH_BYTES or any(len(part) > NAME_BYTES for part in whole.split(b"/"))


def _too_long_problem(rel: str, root: str | Path | None) -> str | None:
    """Why a manifest line's path cannot be opened (None where it can): too long itself, or
    once joined to the set's folder, which is where verify opens it."""
    bounds = f"longer than a path can be ({NAME_BYTES} bytes a part, {PATH_BYTES - 1} in all): not a file of the set"
    size = f"{len(os.fsencode(rel)):,} bytes"
    if _too_long(rel):
        return f"names {shortened(rel)} ({size}), {bounds}"
    if root is None or not _too_long(joined := os.path.join(root, rel)):
        return None
    return (f"names {shortened(rel)} ({size}; {len(os.fsencode(joined)):,} once joined to the set's folder "
            f"{root}), {bounds}")


def shown_path(rel: str, keep: int = 160) -> str:
    """A set's path as a line of verify's shows it: whole, or where a path of up to 4 KB
    would fill a screen, its start and how much more there is."""
    return rel if len(rel) <= keep else f"{rel[:keep]}... ({len(rel) - keep:,} more characters)"


def parse_manifest(path: str | Path, root: str | Path | None = None) -> dict[str, str]:
    """`{relative path: sha256}` from a sha256sum-format file; with `root`, the set's folder
    its paths are opened under, a path too long once joined to it is refused as its line."""
    path = Path(path)
    if not path.is_file():
        if path.exists():  # a device, FIFO or folder given as --manifest: named as what it is
            raise ManifestError(f"{path}: not a manifest file ({_kind(path.stat().st_mode)})")
        raise ManifestError(f"{path}: manifest is missing (build it first: snakemake manifest)")
    out = {}
    try:
        text = read_limited(path).decode("utf-8")
    except (TooLarge, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: not a manifest file ({exc})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, rel = line.partition("  ")
        if not sep:
            digest, sep, rel = line.partition(" *")  # binary-mode lines
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ManifestError(f"{path}:{lineno}: not a sha256sum line: {shortened(line)}")
        if problem := _too_long_problem(rel, root) or _spelling_problem(rel):
            raise ManifestError(f"{path}:{lineno}: {problem}")
        if rel in out:
            raise ManifestError(f"{path}:{lineno}: {shown_path(rel)} is listed twice")
        out[rel] = digest
    return out


def _spelling_problem(rel: str) -> str | None:
    """Why `rel` is not spelled as the manifest writes a path (relative, POSIX, no empty, `.` or
    `..` parts): `eval//x.json` named a file the manifest also lists as `eval/x.json`, and
    verify called it missing."""
    parts = rel.split("/")
    if rel.startswith("/") or any(part in ("", ".", "..") for part in parts):
        return (f"{shown_path(rel)} is not a path as the manifest writes them (relative, without empty, "
                "'.' or '..' parts)")
    return None


def summary(entries: list[tuple[str, str, int]], manifest_text: str) -> dict:
    """Counts and sizes, overall and per top-level directory."""
    by_dir_files: Counter[str] = Counter()
    by_dir_bytes: Counter[str] = Counter()
    by_ext: Counter[str] = Counter()
    for _, rel, size in entries:
        top = rel.split("/", 1)[0] if "/" in rel else "."
        by_dir_files[top] += 1
        by_dir_bytes[top] += size
        by_ext[Path(rel).suffix or "(none)"] += 1
    return {
        "algorithm": "sha256",
        "manifest": MANIFEST_NAME,
        "manifest_sha256": hashlib.sha256(manifest_text.encode()).hexdigest(),
        "files": len(entries),
        "bytes": sum(size for _, _, size in entries),
        "by_top_level": {
            top: {"files": by_dir_files[top], "bytes": by_dir_bytes[top]} for top in sorted(by_dir_files)
        },
        "by_extension": dict(sorted(by_ext.items())),
        "not_listed": sorted(EXCLUDED),
    }


def write(root: str | Path, manifest_path: str | Path | None = None, json_path: str | Path | None = None) -> dict:
    """Hash every evidence file under root; write the manifest and its JSON summary."""
    root = Path(root)
    manifest_path = Path(manifest_path) if manifest_path else root / MANIFEST_NAME
    json_path = Path(json_path) if json_path else root / MANIFEST_JSON
    entries = build(root)
    if not entries:
        raise ManifestError(f"{root}: no evidence files to list")
    text = format_manifest(entries)
    info = summary(entries, text)
    atomic_write_text(manifest_path, text)
    write_json(json_path, info)
    return info
