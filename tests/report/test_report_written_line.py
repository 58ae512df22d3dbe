"""The line `sacscale report` ends with names the files it wrote as a reader takes them.
An unexpanded `--output-dir '~'` (a Makefile or a config passes it so) writes into a folder
named `~` in the working folder, and the line read `wrote ~/report.md`: the home folder.
A relative path that starts with `~` is now printed with `./` before it."""

import sys
from pathlib import Path

from cli_runs import sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


def test_a_folder_named_tilde_is_printed_as_the_folder_it_is(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    work = tmp_path / "work"
    work.mkdir()
    done = sacscale("report", "--run-set", root, "--output-dir", "~", cwd=work)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "wrote ./~/report.md and ./~/report.html"
    assert (work / "~" / "report.md").is_file()
