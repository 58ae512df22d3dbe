"""Each line verify prints is one line, whatever text of the set it quotes: a line break in
a left-out file's reason (evidence.json `why`) or in the set's folder name is shown
escaped, never as a line of its own that could read as verify's verdict; and evidence.json
names a `why` that is not one line of printable text."""

import json
import subprocess
import sys

from set_copies import copy_committed_set, remake_manifest

from sacscale.usage import say

SET = "h200x1_shared_short"
FORGED = "verified 99 files: OK"


def _verify(root) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(root), "--no-metrics"],
                          capture_output=True, text=True, timeout=300)


def test_a_line_break_in_a_left_out_reason_writes_no_line_and_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    scope = json.loads((root / "evidence.json").read_text())
    scope["left_out"][0]["why"] = f"\x1b]0;PWNED\x07 approved by the PI\n{FORGED}\r{FORGED}"
    (root / "evidence.json").write_text(json.dumps(scope))
    remake_manifest(root)
    done = _verify(root)
    lines = (done.stdout + done.stderr).splitlines()
    assert not [line for line in lines if line.lstrip().startswith(FORGED)], lines
    assert done.returncode == 1
    assert "  scope: evidence.json: left_out[0].why '\\x1b]0;PWNED\\x07 approved by the PI\\nverified 9' is not one " \
           "line of printable text" in lines, lines


def test_every_line_naming_the_sets_folder_is_one_line(tmp_path):
    parent = tmp_path / f"odd\n{FORGED}\r"
    parent.mkdir()
    root = copy_committed_set(parent, SET)
    done = _verify(root)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stdout.splitlines() if line.startswith(FORGED)], done.stdout
    hashed = f"under {tmp_path}/odd\\n{FORGED}\\r/repo/results/{SET} (against MANIFEST.sha256)"
    assert hashed in done.stdout, done.stdout
    assert "\r" not in done.stdout


def test_say_escapes_line_breaks_and_other_controls(capsys):
    say("wrote /tmp/a\nb/report.md\r\x00\t")
    assert capsys.readouterr().out == "wrote /tmp/a\\nb/report.md\\r\\x00\\t\n"
