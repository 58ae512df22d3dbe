"""A run set whose every name and recorded value from outside the code carries markup:
HTML that would run, a backtick that would close a code span, emphasis and a link.
The same set with plain names gives the page's structure to compare with."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from sacscale.analysis.aggregate import summarize
from sacscale.analysis.metrics import analyze_run
from synthetic_runs import simple_run

IMG = "<img src=x onerror=alert(1)>"
TICKS = "`<b>bold</b>`"
STARS = "*em* __strong__"
LINK = "[x](javascript:alert(1))"
HOSTILE = (IMG, TICKS, STARS, LINK)


def names(hostile: bool) -> dict[str, str]:
    """Names of the set's parts: markup-carrying ones, or plain ones of the same shape."""
    if not hostile:
        return {"set": "S", "base": "n1_a", "other": "n2_b", "attempt": "r1_n1_a.attempt1",
                "value": "plain value", "path": "/opt/plain/learner.py"}
    return {"set": f"S{IMG}", "base": f"n1{IMG}{TICKS}", "other": f"n2{STARS}{LINK}",
            "attempt": f"a{TICKS.replace('/', '')}{IMG}", "value": f"v {IMG} {TICKS} {STARS} {LINK}",
            "path": f"/opt/{TICKS}{IMG}/learner.py"}


def run_set(root: Path, hostile: bool) -> dict:
    """The files `sacscale report` reads, as keyword arguments of write_report (paths)."""
    n = names(hostile)
    metrics, run_dirs = [], []
    for repeat in (1, 2, 3):
        for config, rate, ranks in ((n["base"], 1000.0, 1), (n["other"], 1900.0, 2)):
            run = simple_run(root / "runs" / f"r{repeat}_{config}", config, repeat, rate * (1 + 0.05 * repeat), ranks)
            metrics.append(analyze_run(run))
            run_dirs.append(run)
    paths = []
    for m in metrics:
        p = root / "metrics" / f"{m['run']}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(m))
        paths.append(p)
    summary = summarize(metrics, [n["base"], n["other"]], meta={"run_set": n["set"]})
    (root / "summary.json").write_text(json.dumps(summary))
    env = {"plan": {"run_set": n["set"], "preset": n["value"], "preset_reason": n["value"], "repeats": 3,
                    "iterations": 10, "description": n["value"]},
           "project": {"commit": n["value"], "dirty": True,
                       "diff": {"file": n["path"], "bytes": 10, "sha256": n["value"]}},
           "versions": {"torch": n["value"]}, "torch": {"gpus": [{"name": n["value"], "memory_mib": 1000}]},
           "env": {"NCCL_DEBUG": n["value"], "CUDA_VISIBLE_DEVICES": n["value"]},
           "learner": {"file": n["path"], "graph_hooks": True},
           "cpu": {"model": n["value"], "available": n["value"],
                   "layout": f"CPU CORE\n{n['value']}" + (f"\n```\n{IMG}" if hostile else "")}}
    (root / "environment.json").write_text(json.dumps(env))
    (root / "correctness.json").write_text(json.dumps({
        "pass": True, "backend": n["value"], "note": n["value"],
        "comparisons": [{"tensor": n["value"], "max_rel_diff": 1e-6, "pass": True}]}))
    (root / "model.json").write_text(json.dumps({"file": n["path"], "source": n["value"]}))
    attempts = root / "attempts"
    (attempts / n["attempt"]).mkdir(parents=True, exist_ok=True)  # a folder name: no '/' in it
    return {"summary_path": root / "summary.json", "metrics_paths": paths, "run_dirs": run_dirs,
            "environment": root / "environment.json", "probe": root / "correctness.json",
            "model": root / "model.json", "attempts": [n["attempt"]], "attempts_dir": attempts}


class PageStructure(HTMLParser):
    """Every element with its attribute names, every link and image target, the text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple[str, ...]]] = []
        self.targets: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, tuple(sorted(a for a, _ in attrs))))
        self.targets += [v or "" for a, v in attrs if a in ("href", "src")]

    def handle_data(self, data):
        self.text.append(data)


def structure(html: str) -> PageStructure:
    page = PageStructure()
    page.feed(html)
    return page
