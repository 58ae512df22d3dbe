"""A file output named as a folder (a trailing slash, `.` or `..`) is refused in one line,
nothing written: `verify S --output /tmp/x/vout/` wrote a file named vout."""

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
