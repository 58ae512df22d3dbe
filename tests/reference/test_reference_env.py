"""`sacscale reference-env`: the reference trainer's own environment recorded (every
package with its version, its assets), and named clearly when it is missing."""

import json

from sacscale.cli import main


def test_the_reference_environment_is_recorded(reference_python, tmp_path, capsys):
    out = tmp_path / "reference_env.json"
    assert main(["reference-env", "--python", reference_python, "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["unilab"] == "1.5.2" and record["mujoco"].startswith("3.11")
    assert record["created"] is False and record["python"] == reference_python
    assert len(record["packages"]) > 20 and record["packages"]["unilab"] == "1.5.2"
    assert "unilab 1.5.2, mujoco 3.11" in capsys.readouterr().out


def test_a_missing_environment_is_named_and_only_created_when_asked(tmp_path, capsys):
    out = tmp_path / "reference_env.json"
    missing = tmp_path / "venv" / "bin" / "python"
    assert main(["reference-env", "--python", str(missing), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--python {missing}: no such interpreter; create the environment with --create" in err
    assert not out.exists() and not missing.parent.exists()
    odd = tmp_path / "python3"  # not a venv's bin/python
    assert main(["reference-env", "--python", str(odd), "--output", str(out), "--create"]) == 2
    assert "to create it, give DIR/bin/python" in capsys.readouterr().err
