"""`sacscale reference-env --python P` where P runs but prints no JSON (not a Python, a
wrapper that prints a banner) said `Expecting value: line 1 column 1 (char 0)`, naming
neither the interpreter nor what it printed."""

import shutil

import pytest

from sacscale.cli import main


@pytest.mark.parametrize("program, shown", [("true", "nothing"), ("echo", "'-I -c import json")])
def test_an_interpreter_that_prints_no_record_is_named(tmp_path, capsys, program, shown):
    """A program, not a script (scripts are refused before they start), that prints no JSON."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    shutil.copy(shutil.which(program), python)
    # a venv's settings: without them the search for its standard library would pass /tmp
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert main(["reference-env", "--python", str(python), "--output", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"sacscale reference-env: error: {python}: printed {shown}"), err
    assert len(err.splitlines()) == 1 and not (tmp_path / "r.json").exists()
