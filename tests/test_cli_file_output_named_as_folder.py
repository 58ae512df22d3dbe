"""A file output named as a folder (a trailing slash, `.` or `..`) is refused in one line,
nothing written: `verify S --output /tmp/x/vout/` wrote a file named vout."""

import os
import socket

import pytest

from sacscale.cli import main


@pytest.mark.parametrize("argv", [("verify", "{d}/set", "--output", "{d}/vout/"),
                                  ("analyze-run", "{d}/run", "--output", "{d}/sub/."),
                                  ("verify-env", "--output", "{d}/x/")])
def test_a_file_output_named_as_a_folder_is_refused(capsys, tmp_path, argv):
    (tmp_path / "set").mkdir()
    (tmp_path / "run").mkdir()
    with pytest.raises(SystemExit) as done:
        main([a.format(d=tmp_path) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert done.value.code == 2 and "names a folder" in err and "--output" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "set"]


def _refused(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    assert done.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("target", ["folder", "nofolder/"])
def test_a_file_output_that_is_a_link_to_a_folder_is_refused_the_link_kept(capsys, tmp_path, target):
    """The write replaces a link: a user's own link to a folder was silently made a file."""
    (tmp_path / "set").mkdir()
    (tmp_path / "folder").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / target if target == "folder" else f"{tmp_path}/{target}")
    err = _refused(capsys, "verify", tmp_path / "set", "--output", link)
    assert err == (f"sacscale verify: error: argument --output: {link} leads to a folder (a link to "
                   f"{os.readlink(link)}); this option is a file: give its name")
    assert link.is_symlink()


def test_plan_matrix_output_through_a_link_to_a_folder_is_refused(capsys, tmp_path):
    link = tmp_path / "dl"
    link.symlink_to(tmp_path)
    err = _refused(capsys, "plan-matrix", "--output", link)
    assert err == (f"sacscale plan-matrix: error: argument --output: {link} leads to a folder (a link to "
                   f"{tmp_path}); this option is a file: give its name")


@pytest.mark.parametrize("kind, make", [("a FIFO", os.mkfifo),
                                        ("a socket", lambda p: socket.socket(socket.AF_UNIX).bind(p))])
def test_a_file_output_that_is_a_fifo_or_socket_is_refused_before_the_work(capsys, tmp_path, kind, make):
    """Refused by the write too, but only after the work (a whole learner-bench)."""
    (tmp_path / "set").mkdir()
    special = tmp_path / "special"
    make(str(special))
    err = _refused(capsys, "verify", tmp_path / "set", "--output", special)
    assert err == (f"sacscale verify: error: argument --output: {special}: not a plain file ({kind}): an output "
                   "replaces a file, never a device, FIFO or socket")
