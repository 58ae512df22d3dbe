"""`compare-learning`'s LABEL=RUN_DIR arguments. Before: a label with an escape sequence or a
bidi override was escaped on the terminal but written raw into the JSON output and the
figure; a run directory that does not exist was named as a run without tb/, exit 1. Now
both are one line, exit 2, nothing written."""

from pathlib import Path

import pytest

from sacscale.cli import main

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "results" / "h200x1_shared_short" / "runs" / "shared_r1_n1_pool7"


def _compare(capsys, tmp_path, *runs):
    out, fig = tmp_path / "c.json", tmp_path / "c.png"
    code = main(["compare-learning", *runs, "--output", str(out), "--figure", str(fig)])
    err = capsys.readouterr().err
    assert not out.exists() and not fig.exists(), err
    assert err.count("\n") == 1 and "\x1b" not in err and "Traceback" not in err, err
    return code, err


@pytest.mark.parametrize("label, what", [
    ("a\x1b[2Jb", "a control character ('\\x1b')"),
    ("a\nb", "a control character ('\\n')"),
    ("a\u202eb", "an invisible formatting character ('\\u202e')"),
    ("a\u200bb", "an invisible formatting character ('\\u200b')"),
])
def test_a_label_with_control_or_invisible_characters_is_refused(capsys, tmp_path, label, what):
    code, err = _compare(capsys, tmp_path, f"{label}={RUN}")
    assert code == 2, err
    assert err.startswith(f"sacscale compare-learning: error: label: holds {what} in "), err


def test_a_missing_run_directory_is_named_missing(capsys, tmp_path):
    missing = tmp_path / "no-such-run"
    code, err = _compare(capsys, tmp_path, f"a={RUN}", f"b={missing}")
    assert code == 2, err
    assert err == f"sacscale compare-learning: error: b={missing}: no such run directory\n"


def test_a_file_given_as_a_run_is_named_not_a_directory(capsys, tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    code, err = _compare(capsys, tmp_path, f"a={plain}")
    assert code == 2 and err == f"sacscale compare-learning: error: a={plain}: not a directory\n", err
