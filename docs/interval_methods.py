"""Old (percentile) and new (BCa) intervals side by side for every committed set under results/.

    python docs/interval_methods.py            # the Markdown table in docs/statistics.md

Reads each set's plan.json and metrics/ only; writes nothing.
"""

import json
import sys
from pathlib import Path

from sacscale.analysis.aggregate import BCA, PERCENTILE, recorded_ci_method
from sacscale.evidence.verify import recompute_summary


def comparisons(root: Path, method: str) -> list[dict]:
    """The set's comparisons recomputed from its plan and metrics, as verify does."""
    plan = json.loads((root / "plan.json").read_text())
    metrics = [json.loads(p.read_text()) for p in sorted((root / "metrics").glob("*.json"))]
    return recompute_summary(plan, metrics, method)["comparisons"]


def fmt(interval) -> str:
    return "none" if interval is None else f"{interval[0]:.4f} .. {interval[1]:.4f}"


def main(results: Path) -> None:
    print("| set | recorded method | baseline -> compared | paired repeats | stored | percentile | BCa | BCa fallback |")
    print("|---|---|---|---|---|---|---|---|")
    for root in sorted(p for p in results.iterdir() if p.is_dir()):
        stored = json.loads((root / "summary.json").read_text()) if (root / "summary.json").is_file() else None
        if stored is None or not (root / "metrics").is_dir():
            print(f"| {root.name} | | no summary: nothing to compare | | | | | |")
            continue
        old, new = comparisons(root, PERCENTILE), comparisons(root, BCA)
        if not old:
            print(f"| {root.name} | {recorded_ci_method(stored)} | no comparison | | | | | |")
        for stored_comparison, a, b in zip(stored.get("comparisons") or [{}] * len(old), old, new):
            print(f"| {root.name} | {recorded_ci_method(stored)} | {a['baseline']} -> {a['compared']} | "
                  f"{a.get('ci_repeats', 'none')} | {fmt(stored_comparison.get('ratio_ci95'))} | {fmt(a.get('ratio_ci95'))} | {fmt(b.get('ratio_ci95'))} | "
                  f"{b.get('ci_fallback') or ''} |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "results"))
