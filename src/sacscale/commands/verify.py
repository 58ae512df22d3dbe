"""`sacscale verify ROOT`: re-hash against the manifest and recompute every run's metrics.

Exits 1 naming each changed, missing or extra file and each figure that does not
recompute; 0 when everything matches."""

from __future__ import annotations

import argparse
import sys

from sacscale.evidence.atomic import write_json
from sacscale.evidence.manifest import ManifestError
from sacscale.evidence.verify import verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", help="evidence root (results/<run set>)")
    parser.add_argument("--manifest", help="manifest to check against (default: ROOT/MANIFEST.sha256)")
    parser.add_argument("--output", help="write the result as JSON here (also when it fails)")
    parser.add_argument("--no-metrics", action="store_true", help="only re-hash; do not recompute metrics")


def run(args: argparse.Namespace) -> int:
    try:
        result = verify(args.root, args.manifest, recompute=not args.no_metrics)
    except ManifestError as exc:
        print(f"sacscale verify: error: {exc}", file=sys.stderr)
        return 1
    if args.output:
        write_json(args.output, result.as_dict())
    if result.ok:
        print(f"verified {result.files_checked} files and {result.runs_checked} runs' metrics under {args.root}")
        return 0
    problems = result.problems()
    print(f"sacscale verify: {len(problems)} problem(s) under {args.root}:", file=sys.stderr)
    for line in problems:
        print(f"  {line}", file=sys.stderr)
    return 1
