"""What the file system refuses while report looks at its folder is said as every command says
it. Before: report printed Python's raw form itself, `sacscale report: error: [Errno 13]
Permission denied: '...'` (an --output-dir reached through an unreadable /proc/1/cwd)."""

import errno

from cli_runs import REPO, SET

from sacscale.cli import main
from sacscale.commands import report


def test_a_folder_the_file_system_refuses_is_one_line_in_words(tmp_path, capsys, monkeypatch):
    out = tmp_path / "pcwd" / "viaproc"

    def refused(*folders):
        raise PermissionError(errno.EACCES, "Permission denied", str(folders[0]))

    monkeypatch.setattr(report, "refuse_links", refused)
    code = main(["report", "--run-set", str(REPO / "results" / SET), "--output-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [f"sacscale report: error: {out}: permission denied"], err
    assert not out.exists()
