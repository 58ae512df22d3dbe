"""Free text a command writes into its records (compare-learning's labels, a setting's
name) whose bytes are not UTF-8, under a UTF-8 file-system encoding: a label `a\\xff` was
written as the lone surrogate "a\\udcff", which strict JSON readers refuse, where --log-dir
and --model were refused by the project's not-UTF-8 rule. Every value given on the command
line is now judged by that rule, before any work: one line, exit 2."""

import os
import subprocess
import sys

# a label is text, not a name: given again in UTF-8, not renamed
NOT_UTF8 = "not valid UTF-8 (undecodable bytes in the text): the records are UTF-8; give it in UTF-8"


def _sacscale(*argv: bytes | str, cwd) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], cwd=cwd, capture_output=True, timeout=120,
                          env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"})
    return done.returncode, done.stderr.decode("utf-8", "backslashreplace").strip().splitlines()


def test_a_compare_learning_label_that_is_not_utf8_is_refused(tmp_path):
    for run in ("tr0", "trD"):
        (tmp_path / run).mkdir()
    assert _sacscale(b"compare-learning", b"a\xff=tr0", b"b=trD", b"--output", b"cl.json", cwd=tmp_path) == (2, [
        f"sacscale compare-learning: error: LABEL=RUN_DIR 'a\\xff=tr0' is {NOT_UTF8}"])
    assert sorted(os.listdir(tmp_path)) == ["tr0", "trD"]


def test_an_option_of_free_text_that_is_not_utf8_is_refused(tmp_path):
    assert _sacscale(b"aggregate", b"m.json", b"--csv", b"s.csv", b"--json", b"s.json", b"--order", b"a\xfe,b",
                     cwd=tmp_path) == (2, [f"sacscale aggregate: error: --order 'a\\xfe,b' is {NOT_UTF8}"])
    assert os.listdir(tmp_path) == []
