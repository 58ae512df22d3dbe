"""The status summary (python -m sacscale.evidence.status)
(docs/faults.md row 27). Before: a recorded GPU name, torch version or set name
holding markup or `|` reached README.md's table as written (an <img onerror> rendered, a
cell split), and a record of another shape (environment.json's torch a string) ended in a
traceback."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sacscale.evidence import status
from set_copies import unpacked_checkout

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"


@pytest.fixture
def root(tmp_path):
    """An unpacked copy (no git: every set directory counts) with one set."""
    return unpacked_checkout(tmp_path, SET)


def set_env(root, name, edit):
    path = root / "results" / name / "environment.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("| `")]


def test_recorded_values_are_text_in_the_table(root):
    def edit(env):
        env["torch"]["gpus"][0]["name"] = "<img src=x onerror=alert(1)>|x"
        env["versions"]["torch"] = "2.1 | <b>x</b>"
    set_env(root, SET, edit)
    shutil.copytree(root / "results" / SET, root / "results" / "a|b<img src=y>")
    text = status.render(root)
    outside_code = re.sub(r"`[^`]*`", "", text)  # a code span shows its text as written: inert
    assert "<img" not in outside_code and "<b>" not in outside_code
    for row in table_rows(text):  # every row keeps its 11 cells: no `|` splits one
        assert len(row.replace("\\|", "").strip("|").split("|")) == 11, row


@pytest.mark.parametrize("env", [{"torch": "x"}, {"torch": {"gpus": "x"}}, {"versions": "x"}])
def test_a_record_of_another_shape_is_one_line(root, capsys, env):
    (root / "results" / SET / "environment.json").write_text(json.dumps(env))
    code = status.main(["--root", str(root)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and f"results/{SET}: a record of an unexpected shape" in err, err


def test_a_missing_file_to_check_is_one_line(root, capsys, tmp_path):
    code = status.main(["--root", str(root), "--check", str(tmp_path / "missing.md")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "missing.md" in err and "\n" not in err


def test_the_committed_documents_are_unchanged():
    assert status.main(["--check", str(REPO / "README.md"), str(REPO / "docs" / "benchmarks.md")]) == 0


def test_a_lone_surrogate_in_a_record_never_reaches_a_document(root, tmp_path):
    """`"H200\\udcff"` (half of a character, which JSON may escape) reached the table and
    `--write` ended in a UnicodeEncodeError traceback; the report stage likewise (exit 1 as
    unexpected). Every record is read strictly (sacscale.reading): the set's environment.json
    is named as one that cannot be read (not listed as a set without one), the document untouched."""
    from sacscale.reading import RecordJSONError, loads_record
    set_env(root, SET, lambda env: env["torch"]["gpus"][0].update(name="H200\udcff"))
    doc = tmp_path / "doc.md"
    doc.write_text(f"# x\n{status.BEGIN}\n{status.END}\n")
    assert status.main(["--root", str(root), "--write", str(doc)]) == 2
    assert doc.read_text(encoding="utf-8") == f"# x\n{status.BEGIN}\n{status.END}\n"
    with pytest.raises(RecordJSONError, match=r"a lone surrogate \(\\udcff\)"):
        loads_record('{"name": "H200\\udcff"}')
    assert loads_record('{"name": "\\ud83d\\ude00"}') == {"name": "\U0001f600"}  # a pair is one character


def test_a_committed_set_name_that_is_not_utf8_is_shown_escaped(root, tmp_path):
    """`git ls-files` names a committed folder by its bytes: one not UTF-8 (b"h200\\xff")
    ended the summary in `error: : 'utf-8' codec can't decode byte 0xff` (exit 2), naming
    no set. It is read as the folder listing reads it and shown escaped, as the report
    shows such a name (the byte 0xff as `\\udcff`)."""
    folder = os.fsencode(root / "results") + b"/h200\xff"
    shutil.copytree(root / "results" / SET, os.fsdecode(folder))
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "results"], check=True)
    subprocess.run([*git, "commit", "-qm", "sets"], check=True)
    doc = tmp_path / "doc.md"
    doc.write_text(f"# x\n{status.BEGIN}\n{status.END}\n")
    assert status.main(["--root", str(root), "--write", str(doc)]) == 0
    rows = table_rows(doc.read_text(encoding="utf-8"))
    assert sorted(row.split(" | ")[0] for row in rows) == ["| `h200\\udcff`", f"| `{SET}`"]
