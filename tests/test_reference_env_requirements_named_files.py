"""`reference-env --create --requirements FILE` where a line names another user's file or
folder by a bare name. Before: a path requirement was recognised by a case-sensitive and
shorter list of archive suffixes than pip's, so `EVIL-1.0.TAR.GZ` (or `x.tar.lzma`, `x.tlz`)
in the working folder, hers, was built and installed by pip as root. Now pip's suffixes
count in any case, and any requirement that names a file or folder there (from the working
folder or the file's folder) is judged, whatever its name."""

import os

import pytest

from sacscale.cli import main
from tests.reference_env_requirements_stand_in import THING_TAIL, created

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="another user's file is made by root (chown)")


def refused_line(req, thing):
    return (f"sacscale reference-env: error: --requirements {req}: '{req}' line 1: '{thing}' belongs to uid 1001, "
            f"another user; {THING_TAIL}")


@pytest.mark.parametrize("name", ["EVIL-1.0.TAR.GZ", "evil-1.0.tar.lzma", "evil-1.0.tlz", "evil-1.0.tar.lz",
                                  "Evil-1.0-py3-none-any.WHL", "evil-1.0", "evilpkg/"])
def test_another_users_file_in_the_working_folder_named_bare_is_refused(tmp_path, capsys, pip_calls, monkeypatch,
                                                                        name):
    work = tmp_path / "wk"
    work.mkdir()
    thing = work / name.rstrip("/")
    thing.mkdir() if name.endswith("/") else thing.write_bytes(b"an sdist")
    os.chown(thing, 1001, 1001)
    req = tmp_path / "req.txt"
    req.write_text(name.rstrip("/") + "\n")
    monkeypatch.chdir(work)
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == refused_line(req, thing)
    assert pip_calls == []


def test_another_users_file_beside_the_requirements_file_named_bare_is_refused(tmp_path, capsys, pip_calls,
                                                                              monkeypatch):
    (tmp_path / "reqs").mkdir()
    (tmp_path / "wk").mkdir()
    thing = tmp_path / "reqs" / "evilpkg"
    thing.mkdir()
    os.chown(thing, 1001, 1001)
    req = tmp_path / "reqs" / "req.txt"
    req.write_text("evilpkg\n")
    monkeypatch.chdir(tmp_path / "wk")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == refused_line(req, thing)


def test_a_bare_name_that_is_ones_own_folder_or_nothing_there_goes_to_pip(tmp_path, capsys, pip_calls, monkeypatch):
    (tmp_path / "numpy").mkdir()
    req = tmp_path / "req.txt"
    req.write_text("numpy\ntorch==2.9.1\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 1
    assert pip_calls == [str(req)]


@pytest.mark.parametrize("kind", ["a FIFO", "a folder"])
def test_requirements_that_are_there_but_no_file_are_named_as_what_they_are(tmp_path, capsys, kind):
    """Before: a FIFO or a folder given as --requirements was `no such file` (a wrong cause);
    the FIFO is only looked at, never opened (that would wait for a writer)."""
    req = tmp_path / "req"
    os.mkfifo(req) if kind == "a FIFO" else req.mkdir()
    python = tmp_path / "venv" / "bin" / "python"
    code = main(["reference-env", "--create", "--python", str(python), "--requirements", str(req),
                 "--output", str(tmp_path / "r.json")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: is {kind}, not a file of requirements pip can read: "
        "name a requirements file")
    assert not (tmp_path / "venv").exists()


def test_a_nested_fifo_of_this_users_is_named_as_a_fifo(tmp_path, capsys):
    """Before: a FIFO named by `-r` was given another user's reason (`pip installs what it
    names as this user, so that user's code could run as this user`)."""
    fifo = tmp_path / "reqf"
    os.mkfifo(fifo)
    req = tmp_path / "req.txt"
    req.write_text(f"numpy\n-r {fifo}\n")
    python = tmp_path / "venv" / "bin" / "python"
    code = main(["reference-env", "--create", "--python", str(python), "--requirements", str(req),
                 "--output", str(tmp_path / "r.json")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 2: '{fifo}': is a FIFO, not a file of "
        "requirements pip can read: name a requirements file")
