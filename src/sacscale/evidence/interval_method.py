"""The method summary.json's ratio intervals are recomputed with. `sacscale aggregate` has
no option for it and the pipeline passes none: a set made by this code used
aggregate's method (DEFAULT_CI_METHOD, recorded as `ci_bootstrap`), so a summary of such a
set that names another (or none, the percentile method) was not made by the pipeline. A set
whose runs all started before aggregate took that method used the one it names (none: the
percentile method); verify says so among its notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sacscale.analysis.aggregate import CI_METHODS, DEFAULT_CI_METHOD, recorded_ci_method
from sacscale.evidence.result import OLDER
from sacscale.evidence.scope import started_since

# when aggregate's intervals became BCa (they were the percentile method before): a set
# whose runs started later was summarised by aggregate with BCa
METHOD_SINCE = "2026-12-03T19:43:24+00:00"


@dataclass
class IntervalMethod:
    method: str  # what the stored summary is recomputed with
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _named(stored: dict) -> str:
    return f"ci_bootstrap {stored['ci_bootstrap']!r}" if "ci_bootstrap" in stored else \
        f"no ci_bootstrap, which means the {recorded_ci_method(stored)} method"


def interval_method(root: Path, stored: dict) -> IntervalMethod:
    """The method to recompute `stored` (summary.json) with, and what is wrong with the one it names."""
    named = stored.get("ci_bootstrap")
    if named is not None and (not isinstance(named, str) or named not in CI_METHODS):
        return IntervalMethod(DEFAULT_CI_METHOD, [f"summary.json: ci_bootstrap {str(named)[:40]!r} is no interval "
                                                  f"method aggregate knows ({', '.join(sorted(CI_METHODS))})"])
    method = recorded_ci_method(stored)
    late = started_since(root, METHOD_SINCE)
    if late is not None and method != DEFAULT_CI_METHOD:
        # compared with the method it names, so this line is the one problem its intervals give
        return IntervalMethod(method, [f"summary.json: {_named(stored)}, but run {late[0]} started at {late[1]}, "
                                       f"after aggregate's intervals became {DEFAULT_CI_METHOD!r} ({METHOD_SINCE}), "
                                       f"and the pipeline passes it no other method"])
    if method != DEFAULT_CI_METHOD:
        before = f"the set's runs started before aggregate's intervals became {DEFAULT_CI_METHOD!r} ({METHOD_SINCE})"
        said = (f"ci_bootstrap: {OLDER}, so its intervals are recomputed with the {method} method it used then"
                if "ci_bootstrap" not in stored else f"{_named(stored)}: its intervals are recomputed with it")
        return IntervalMethod(method, notes=[f"summary.json: {said}: {before}"])
    return IntervalMethod(method)
