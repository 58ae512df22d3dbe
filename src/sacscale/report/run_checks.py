"""What each run's trainer checked at its end (train_meta.json), in one verdict line: the
ranks' final learner states identical, and the non-finite transitions dropped and critic
targets given no mass (docs/faults.md row 23). A run with a non-finite count or ranks
that differ is named; sets made before these fields say so."""

from __future__ import annotations

import json
from pathlib import Path

from sacscale.report.text import code

META = "train_meta.json"


def _meta(run_dir: Path) -> dict:
    try:
        meta = json.loads((Path(run_dir) / META).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _count(meta: dict, key: str) -> int | None:
    value = meta.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unsynced(meta: dict) -> bool:
    """A run trained with `--grad-sync off`: its ranks are meant to drift apart."""
    config = meta.get("config")
    return isinstance(config, dict) and config.get("grad_sync") == "off"


def _ranks_part(metas: dict[str, dict]) -> str | None:
    multi = {run: m for run, m in metas.items() if isinstance(m.get("world_size"), int) and m["world_size"] > 1}
    if not multi:
        return None
    known = {run: m["ranks_identical"] for run, m in multi.items() if isinstance(m.get("ranks_identical"), bool)}
    if not known:
        return "the ranks' final states were not compared (a set made before that check)"
    unsynced = sorted(run for run in known if _unsynced(multi[run]))
    synced = {run: same for run, same in known.items() if run not in unsynced}
    parts = [_synced_ranks(synced, len(multi) - len(unsynced))] if synced else []
    if unsynced:
        apart = sum(not known[run] for run in unsynced)
        parts.append(f"{apart} of {len(unsynced)} runs without gradient sync ended with ranks apart, as they "
                     f"should ({', '.join(code(r) for r in unsynced)}: each rank learns from its own data)")
    return "; ".join(parts)


def _synced_ranks(known: dict[str, bool], planned: int) -> str:
    differ = sorted(run for run, same in known.items() if not same)
    if differ:
        return (f"**the ranks' final learner states differ** in {', '.join(code(r) for r in differ)} "
                f"({len(known) - len(differ)} of {len(known)} multi-rank runs identical)")
    return f"the ranks' final learner states identical in {len(known)} of {planned} multi-rank runs"


def _nonfinite_part(metas: dict[str, dict]) -> str:
    counted = {run: (_count(m, "nonfinite_rows"), _count(m, "nonfinite_targets")) for run, m in metas.items()}
    counted = {run: c for run, c in counted.items() if None not in c}
    if not counted:
        return "non-finite data not counted (a set made before that check)"
    flagged = sorted(run for run, (rows, targets) in counted.items() if rows or targets)
    if not flagged:
        return (f"0 non-finite transitions dropped and 0 non-finite critic targets in {len(counted)} of "
                f"{len(metas)} runs")
    named = "; ".join(f"{code(run)}: {counted[run][0]:,} transition(s) dropped, {counted[run][1]:,} critic "
                      f"target(s) given no mass{_sources(metas[run])}" for run in flagged)
    return (f"**non-finite data** in {len(flagged)} of {len(counted)} runs ({named}; the learner never "
            "trained on them: see docs/faults.md row 23)")


def _sources(meta: dict) -> str:
    """What the non-finite critic targets came from, as train_meta.json counts them."""
    sources = meta.get("nonfinite_target_sources")
    if not isinstance(sources, dict):
        return ""
    named = [f"{code(str(name))} {n:,}" for name, n in sources.items()
             if isinstance(n, int) and not isinstance(n, bool) and n > 0]
    return f" (not finite: {', '.join(named)})" if named else ""


def run_checks_line(run_dirs: list[Path] | None) -> str | None:
    """The verdict's line on the runs' own end checks, or None without run directories."""
    if not run_dirs:
        return None
    metas = {Path(d).name: _meta(d) for d in run_dirs}
    parts = [p for p in (_ranks_part(metas), _nonfinite_part(metas)) if p]
    return "; ".join(parts) + "."
