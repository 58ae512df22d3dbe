"""`sacscale ARGS` run in the test process, its refusal held to one line without a traceback."""

from sacscale.cli import main


def run(capsys, *argv):
    """(exit status, stderr stripped); fails the test on a traceback or a second line."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "\n" not in err, err
    return code, err
