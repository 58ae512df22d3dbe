"""`sacscale report`: the run set's Markdown and HTML report, with figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sacscale.report.build import write_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", required=True, help="summary.json (from aggregate)")
    parser.add_argument("--metrics", nargs="+", required=True, help="per-run metrics JSON files, in run order")
    parser.add_argument("--output-md", required=True, help="the report as Markdown, to write")
    parser.add_argument("--output-html", required=True, help="the report as HTML (figures linked), to write")
    parser.add_argument("--figures-dir", required=True, help="where the PNG figures go (inside the report's directory)")
    parser.add_argument("--environment", help="environment.json (from verify-env)")
    parser.add_argument("--model", help="model.json (from prepare-model)")
    parser.add_argument("--correctness", help="correctness.json (from probe correctness)")
    parser.add_argument("--verification", help="verify.json (from verify)")
    parser.add_argument("--manifest-json", help="manifest.json (from manifest)")
    parser.add_argument("--run-dirs", nargs="+", metavar="RUN_DIR",
                        help="the runs' directories (tb/rank*/ event files), for the learning curves")
    parser.add_argument("--attempts-dir", help="where the run wrapper keeps failed or stopped attempts "
                        "(logs/<run set>/attempts); the report lists them")
    parser.add_argument("--evaluations", nargs="*", default=[], metavar="EVAL_JSON",
                        help="sacscale evaluate outputs named <run>.json, for the learning-quality table")
    parser.add_argument("--video", help="the best run's video (sacscale render-best), inside the report's directory")
    parser.add_argument("--video-record", help="its record of the choice (sacscale render-best --record)")
    parser.add_argument("--deviations", help="a Markdown file of deviations from the reference system, included verbatim")


def _attempts(path: str | None) -> list[str]:
    p = Path(path) if path else None
    return sorted(e.name for e in p.iterdir()) if p is not None and p.is_dir() else []


def run(args: argparse.Namespace) -> int:
    try:
        write_report(
            args.summary, args.metrics, args.output_md, args.output_html, args.figures_dir,
            environment=args.environment, model=args.model, probe=args.correctness,
            verification=args.verification, manifest=args.manifest_json, deviations=args.deviations,
            run_dirs=args.run_dirs, attempts=_attempts(args.attempts_dir), evaluations=args.evaluations,
            video=args.video, video_record=args.video_record,
        )
    except (OSError, ValueError, KeyError) as exc:
        print(f"sacscale report: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output_md} and {args.output_html}")
    return 0
