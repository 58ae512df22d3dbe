"""`sacscale manifest ROOT`: write ROOT/MANIFEST.sha256 (sha256sum format) and manifest.json."""

from __future__ import annotations

import argparse
import sys

from sacscale.evidence.manifest import ManifestError, write


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", help="evidence root (results/<run set>); paths in the manifest are relative to it")
    parser.add_argument("--output", help="manifest file (default: ROOT/MANIFEST.sha256)")
    parser.add_argument("--json", help="counts and sizes (default: ROOT/manifest.json)")


def run(args: argparse.Namespace) -> int:
    try:
        info = write(args.root, args.output, args.json)
    except ManifestError as exc:
        print(f"sacscale manifest: error: {exc}", file=sys.stderr)
        return 1
    print(f"{info['files']} files, {info['bytes']:,} bytes listed")
    return 0
