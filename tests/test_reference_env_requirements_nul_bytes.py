"""`reference-env --create --requirements FILE` whose lines hold a NUL byte. Before: a path
the line named (`-e ./a<NUL>b`, a nested `-r` file holding NULs, as /proc/self/environ
does) failed in the file-system check as `ValueError: embedded null byte`, the catch-all's
exit 1 naming neither file nor line; a line naming no path went to pip, which failed on it
only after making the environment. Now each is refused before anything is made, naming the
file and the line, exit 2."""

import pytest

from tests.reference_env_requirements_stand_in import created

TAIL = "pip would fail on the line, after making the environment: is this a requirements file? Remove the byte"
HELD = f"holds a NUL byte (\\x00), which no requirement or path can hold; {TAIL}"


def refused(req, line, problem):
    return f"sacscale reference-env: error: --requirements {req}: '{req}' line {line}: {problem}"


@pytest.mark.parametrize("text", ["foo\0bar", "-e ./a\0b", "./a\0b", "--requirement=x\0y", "x @ file:///a\0b"],
                         ids=["a-name", "editable", "a-path", "nested-file", "direct-reference"])
def test_a_line_holding_a_nul_is_refused_naming_file_and_line(tmp_path, capsys, pip_calls, monkeypatch, text):
    req = tmp_path / "req.txt"
    req.write_text(f"numpy\n{text}\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == refused(req, 2, HELD)
    assert pip_calls == [] and not (tmp_path / "venv").exists()


def test_a_nested_file_holding_nuls_is_refused_by_its_own_name(tmp_path, capsys, pip_calls):
    environ = tmp_path / "environ"  # as /proc/self/environ: NAME=value entries ended by NULs
    environ.write_bytes(b"HOME=/root\0SECRET=s3cr3t\0")
    req = tmp_path / "req.txt"
    req.write_text(f"--requirement={environ}\n")
    assert created(tmp_path, req) == 2
    err = capsys.readouterr().err.strip()
    assert err == refused(req, 1, f"'{environ}' line 1: {HELD}")
    assert "s3cr3t" not in err and pip_calls == []


def test_a_file_url_whose_path_holds_an_encoded_nul_is_refused(tmp_path, capsys, pip_calls):
    req = tmp_path / "req.txt"
    req.write_text("-e file:///tmp/a%00b\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == refused(
        req, 1, f"names '/tmp/a\\x00b', a path with a NUL byte (%00), which no path can hold; {TAIL}")
    assert pip_calls == []
