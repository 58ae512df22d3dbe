"""A command run in a working folder that was removed: `verify S --output o.json` failed
with a Python traceback (`Path.absolute()` calling os.getcwd), and without --output the
line was `error: no such file or directory`, naming nothing (under an ASCII locale torch's
loader failed first). Now one line names the cause and the cure, exit 2, before any option
is judged; `--version` names no file and still answers."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli_paths_under_an_ascii_locale import ASCII_LOCALE

SRC = Path(__file__).resolve().parents[1] / "src"
REMOVED = "the working folder was removed (or cannot be read): cd to a folder that exists"


def run_in_removed_folder(tmp_path, *argv, env=None) -> subprocess.CompletedProcess:
    """`sacscale ARGV` started in a folder removed just before (the shell cds there first)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(SRC)}
    return subprocess.run(["bash", "-c", script, "bash", str(gone), sys.executable, "-m", "sacscale", *argv],
                          capture_output=True, text=True, errors="backslashreplace", env=env, timeout=300)


@pytest.mark.parametrize("argv", [["verify", "results/h200x1_shared_short", "--output", "o.json"],
                                  ["verify", "results/h200x1_shared_short"],
                                  ["aggregate", "m.json", "--csv", "s.csv", "--json", "s.json"]])
def test_a_command_in_a_removed_folder_names_it(tmp_path, argv):
    done = run_in_removed_folder(tmp_path, *argv)
    assert done.returncode == 2 and done.stderr.splitlines() == [f"sacscale {argv[0]}: error: {REMOVED}"], \
        done.stderr


def test_an_absolute_set_under_an_ascii_locale_is_named_too(tmp_path):
    done = run_in_removed_folder(tmp_path, "verify", str(SRC.parent / "results" / "h200x1_shared_short"),
                                 env=ASCII_LOCALE)
    assert done.returncode == 2 and done.stderr.splitlines() == [f"sacscale verify: error: {REMOVED}"], done.stderr


def test_the_version_still_answers(tmp_path):
    done = run_in_removed_folder(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.startswith("sacscale "), done.stderr


TOPOLOGY = Path(__file__).resolve().parent / "parallel" / "fixtures" / "topology"


def _plan_matrix_with_folder_removed(here, monkeypatch, then):
    """plan-matrix --output rel.json run in `here`, which is removed (rm -rf, the output's lock
    file too) just before the write; `then(path, data)` writes."""
    from sacscale.cli import main
    from sacscale.commands import plan_matrix

    here.mkdir()
    monkeypatch.chdir(here)

    def removed_first(path, data):
        shutil.rmtree(here)
        return then(path, data)
    monkeypatch.setattr(plan_matrix, "write_json", removed_first)
    return main(["plan-matrix", "--lscpu", str(TOPOLOGY / "h200x1.lscpu"), "--nvidia-smi-topo",
                 str(TOPOLOGY / "h200x1.topo"), "--output", "rel.json"])


def test_a_relative_output_is_written_where_it_was_named_after_the_working_folder_went(tmp_path, monkeypatch):
    """The results of a long command are kept: the output was made absolute at the start, so
    its write no longer asks the removed working folder where it is (`error: no such file or
    directory`, the results lost); its folder is made again, as for any output."""
    from sacscale.atomic import write_json

    here = tmp_path / "w"
    assert _plan_matrix_with_folder_removed(here, monkeypatch, write_json) == 0
    assert json.loads((here / "rel.json").read_text())["order"]


def test_a_relative_file_read_after_the_working_folder_went_is_named_with_the_cause(tmp_path, monkeypatch, capsys):
    def read_relative(path, data):
        open("input.json").close()

    assert _plan_matrix_with_folder_removed(tmp_path / "w", monkeypatch, read_relative) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sacscale plan-matrix: error: input.json: no such file or directory (the working folder was removed while "
        "the command ran)")
