"""reference.meshes is judged at planning where a run trains with the reference, as
train-reference judges its --meshes at its start. Before: nothing in planning read it, so a
typo planned and failed the reference run only when it started, after the probe, the model
and every run before it in the order."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve
from sacscale.trainers.unilab import REFERENCE_G1_MESHES

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
HOST = Host(cuda_devices=1, cpus=frozenset(range(16)))


def plan(meshes, order=("ref_n1",)):
    config = {"preset": "h200x1_ref", "host_checks": False, "repeats": 1, "order": list(order), "pairs": [],
              "reference": {"meshes": str(meshes)}}
    return resolve(config, PRESETS, HOST, check_host=False)


@pytest.fixture
def meshes(tmp_path):
    folder = tmp_path / "meshes"
    folder.mkdir()
    for name in REFERENCE_G1_MESHES:
        (folder / name).write_bytes(b"solid\n")
    return folder


def test_a_folder_of_the_meshes_plans(meshes):
    assert plan(meshes).runs


def test_a_meshes_folder_that_is_not_there_is_refused(tmp_path):
    with pytest.raises(PlanError) as refused:
        plan(tmp_path / "mesh")
    assert str(refused.value) == (f"reference.meshes: '{tmp_path}/mesh': not a folder (the asset package's G1 STL "
                                  "files); name the folder of the G1's STL files, or leave reference.meshes out for "
                                  "the asset package's")


def test_a_meshes_folder_lacking_files_is_refused(meshes):
    (meshes / "pelvis.STL").unlink()
    (meshes / "head_link.STL").unlink()
    with pytest.raises(PlanError, match=r"^reference\.meshes: '.*/meshes': lacks 2 of the 35 mesh files the "
                                        r"reference's G1 needs: head_link\.STL, pelvis\.STL; name the folder"):
        plan(meshes)


def test_a_meshes_folder_others_may_write_is_refused(meshes):
    meshes.chmod(0o777)
    with pytest.raises(PlanError) as refused:
        plan(meshes)
    assert str(refused.value).startswith(f"reference.meshes: '{meshes}' is ")
    assert "writable by other users" in str(refused.value)
    assert str(refused.value).endswith("; the reference's scene is made of the files in it, so another user could "
                                       "change what the runs train with: name a folder of your own")


def test_meshes_are_not_judged_without_a_reference_run(tmp_path):
    assert plan(tmp_path / "mesh", order=["ours_n1"]).runs
