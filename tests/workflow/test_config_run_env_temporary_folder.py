"""A run configuration's temporary folder (TMPDIR, TEMP or TMP in its env) is judged at
planning time as sacscale.scratch judges a command's own: one another user owns, or one
others may write without the sticky bit, is refused naming it (a run with another user's
folder as TMPDIR planned and trained without a word, and torch left root's
`torchinductor_root` there)."""

import os
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_defaults.env"


def plan(env):
    return resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)


def folder(tmp_path, name, mode):
    path = tmp_path / name
    path.mkdir()
    path.chmod(mode)
    return path


@pytest.mark.parametrize("name", ["TMPDIR", "TEMP", "TMP"])
def test_a_folder_others_may_write_is_refused(tmp_path, name):
    open_folder = folder(tmp_path, "open", 0o777)
    with pytest.raises(PlanError) as info:
        plan({name: str(open_folder)})
    assert str(info.value) == (f"{WHERE}: {name} '{open_folder}': the temporary folder ({name}) is writable by other "
                               "users without the sticky bit (mode 0777), who could swap the scratch files written "
                               f"there; set {name} to a folder of your own")


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another user's is made by root (chown)")
def test_another_user_s_folder_is_refused_and_one_to_be_made_there_too(tmp_path):
    theirs = folder(tmp_path, "evehome", 0o755)
    os.chown(theirs, 1001, 1001)
    with pytest.raises(PlanError, match=r"TMPDIR '.*/evehome': the temporary folder \(TMPDIR\) belongs to uid 1001, "
                                        "another user"):
        plan({"TMPDIR": str(theirs)})
    with pytest.raises(PlanError, match=rf"TMPDIR '.*/evehome/sub': .*belongs to uid 1001.* \(judged by {theirs}, "
                                        "where it would be made\\)$"):
        plan({"TMPDIR": str(theirs / "sub")})


def test_a_folder_of_one_s_own_or_none_given_passes(tmp_path):
    mine = folder(tmp_path, "mine", 0o700)
    plan({"TMPDIR": str(mine), "TEMP": str(mine / "not_made_yet"), "TMP": ""})
    plan({"TMPDIR": "/tmp"})  # writable by all, but sticky: only a file's owner renames it
