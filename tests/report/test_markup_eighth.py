"""Recorded values the report showed as written (eighth hardening pass): counts of
manifest.json and verify.json, the summary's pairing sentence and its numbers, where a
record holds a string with markup (`<img onerror>` ran in report.html)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
MARKUP = "<img src=x onerror=alert(1)>"


def _edit(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def test_recorded_counts_and_sentences_with_markup_are_shown_as_text(tmp_path):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    _edit(root / "manifest.json", lambda r: r.update(files=MARKUP, bytes=MARKUP))
    _edit(root / "verify.json", lambda r: r.update(files_checked=MARKUP, runs_checked="[x](javascript:alert(1))"))

    def summary(r):
        r["pairing"] = MARKUP
        for config in r["configs"].values():
            config["mean"] = MARKUP
    _edit(root / "summary.json", summary)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "report", "--run-set", f"results/{SET}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for page in ("report.md", "report.html"):
        text = (tmp_path / "reports" / SET / page).read_text()
        assert "<img src=x" not in text and 'href="javascript' not in text, page
        assert text.count("&lt;img src=x onerror=alert(1)&gt;") >= 5, page
