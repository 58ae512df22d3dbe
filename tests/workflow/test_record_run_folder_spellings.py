"""record-run's folders as spelled. Before: `--attic ''` and `--state-dir ''` (an unset
variable) were the current folder (a failed attempt was moved into it), `--run-dir ''` was
refused as `.`, which the user never typed; and a work folder through a link spelled with
`..` (`rr/lnk/sub/..`) passed the link rule, failed only on the rename (EBUSY), named as an
interrupted attempt, the attic left made. Now each is refused in one line naming the
option, exit 2, nothing moved or made."""

import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.pipeline.run_folders import _climbs_after_a_name


def _record_run(cwd, *folders):
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", *folders, "--timeout", "10", "--", "true"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip()


@pytest.mark.parametrize(("option", "way_out"), [("--run-dir", "give one"), ("--work-dir", "give one"),
                                                 ("--attic", "give one"),
                                                 ("--state-dir", "give one, or leave the option out")])
def test_an_empty_folder_is_refused_naming_the_option(tmp_path, option, way_out):
    given = {"--run-dir": "rr/R6", "--work-dir": "rr/W6", "--attic": "rr/att", option: ""}
    said = _record_run(tmp_path, *[arg for pair in given.items() for arg in pair])
    assert said == (f"sacscale record-run: error: argument {option}: an empty value (an unset variable?); "
                    f"{way_out}")
    assert list(tmp_path.iterdir()) == []


def test_a_work_folder_through_a_link_spelled_with_dots_is_refused(tmp_path):
    (tmp_path / "realW" / "sub").mkdir(parents=True)
    (tmp_path / "rr").mkdir()
    (tmp_path / "rr" / "lnk").symlink_to("../realW")
    said = _record_run(tmp_path, "--run-dir", "rr/R5", "--work-dir", "rr/lnk/sub/..", "--attic", "rr/att5")
    assert said.startswith("sacscale record-run: --work-dir rr/lnk/sub/..: has a .. after a folder's name; "
                           "record-run moves and renames this folder by its name"), said
    assert sorted(p.name for p in (tmp_path / "rr").iterdir()) == ["lnk"]
    assert sorted(p.name for p in (tmp_path / "realW").iterdir()) == ["sub"]


def test_leading_dots_still_name_a_folder(tmp_path):
    """`../runs/R` climbs from the current folder, a real path: not refused by the rule."""
    assert not _climbs_after_a_name(Path("../../runs/R")) and not _climbs_after_a_name(Path("/a/b/R"))
    assert _climbs_after_a_name(Path("a/lnk/sub/..")) and _climbs_after_a_name(Path("/a/../b"))
