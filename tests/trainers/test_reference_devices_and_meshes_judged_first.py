"""train-reference's --devices with an empty item (`0,,1`, read as 0,1) and a --meshes folder
without the G1's STL files (`/etc`) were judged only after the reference's interpreter was
asked (an interpreter without the reference then answered for them). Both are judged first
now, in one line, exit 2, nothing made; the mesh names are those of the pinned reference's
G1, as its committed runs' scenes record them."""

import json
import sys
from pathlib import Path

import pytest

from cli_runs import REPO, one_line, sacscale
from sacscale.trainers.unilab import REFERENCE_G1_MESHES


def train_reference(tmp_path, *option):
    return sacscale("train-reference", "--reference-python", sys.executable, "--log-dir", tmp_path / "run", *option)


@pytest.mark.parametrize("devices", ["0,,1", ",0", "0,", "0, ,1"])
def test_devices_with_an_empty_item_are_refused_first(tmp_path, devices):
    done = train_reference(tmp_path, "--devices", devices)
    one_line(done, f"sacscale train-reference: error: --devices {devices}: CUDA device indices, comma list "
                   "(e.g. 0 or 0,1)")
    assert not (tmp_path / "run").exists()


def test_a_mesh_folder_without_the_g1s_meshes_is_refused_first(tmp_path):
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    for name in REFERENCE_G1_MESHES[2:]:
        (meshes / name).write_bytes(b"solid")
    done = train_reference(tmp_path, "--meshes", meshes)
    one_line(done, f"sacscale train-reference: error: --meshes {meshes}: lacks 2 of the 35 mesh files the "
                   "reference's G1 needs: head_link.STL, left_ankle_pitch_link.STL")
    one_line(train_reference(tmp_path, "--meshes", "/etc"), "--meshes /etc: lacks 35 of the 35 mesh files the "
                                                            "reference's G1 needs: head_link.STL, "
                                                            "left_ankle_pitch_link.STL, left_ankle_roll_link.STL, ...")
    assert not (tmp_path / "run").exists()


def test_a_mesh_folder_with_the_g1s_meshes_passes_to_the_reference(tmp_path):
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    for name in REFERENCE_G1_MESHES:
        (meshes / name).write_bytes(b"solid")
    done = train_reference(tmp_path, "--meshes", meshes)
    assert done.returncode == 1 and "cannot import the reference" in done.stderr, done.stderr


def test_the_mesh_names_are_those_of_the_reference_runs_recorded_scenes():
    for record in sorted(REPO.glob("results/*/runs/*/trainer.json")):
        files = json.loads(record.read_text())["scene"]["sha256_by_file"]
        assert sorted(Path(f).name for f in files if f.startswith("assets/")) == list(REFERENCE_G1_MESHES), record
