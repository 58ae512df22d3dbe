"""SACSCALE_G1_ASSETS naming a copy whose files MuJoCo reads but that are not the G1's.
A g1.xml that is just `<mujoco/>` failed in the build under the catch-all (`AttributeError:
'NoneType' object has no attribute 'add_geom'`, rc 1) and in train's collectors (a
traceback, files left); an empty g1_mjx.xml built another model without a word (23
colliding geoms instead of 42). Now one line names the setting, the file and what the
task needs of it, exit 2, nothing made."""

import pytest

from sacscale.cli import main
from tests.faults.test_g1_asset_files_unreadable import SETTING, copy_of_the_g1_folder, prepare_model


@pytest.fixture
def copy(tmp_path, monkeypatch):
    return copy_of_the_g1_folder(tmp_path, monkeypatch)


def refused(copy, tmp_path, capsys, what: str) -> None:
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: {what}, which the task needs: not the G1 model"])


def edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_a_g1_file_without_the_robot_names_its_first_missing_body(copy, tmp_path, capsys):
    (copy / "g1.xml").write_text("<mujoco/>")
    refused(copy, tmp_path, capsys, "g1.xml has no body 'pelvis'")


def test_an_mjx_file_without_colliders_is_not_built_into_another_model(copy, tmp_path, capsys):
    (copy / "g1_mjx.xml").write_text("<mujoco/>")
    refused(copy, tmp_path, capsys, "g1_mjx.xml has no geom 'pelvis_collision'")


def test_a_g1_file_without_a_sensor_site_is_named(copy, tmp_path, capsys):
    edit(copy / "g1.xml", '<site name="imu_in_torso" pos="-0.03959 -0.00224 0.14792" size="0.01"/>', "")
    edit(copy / "g1.xml", '<gyro site="imu_in_torso"', '<gyro site="imu_in_pelvis"')
    edit(copy / "g1.xml", '<accelerometer site="imu_in_torso"', '<accelerometer site="imu_in_pelvis"')
    refused(copy, tmp_path, capsys, "g1.xml has no site 'imu_in_torso'")


def test_a_g1_file_with_a_joint_more_than_the_actions_is_named(copy, tmp_path, capsys):
    joint = '<joint name="waist_pitch_joint" axis="0 1 0" range="-0.52 0.52" actuatorfrcrange="-50 50"/>'
    edit(copy / "g1.xml", joint, joint + '<joint name="neck_joint" axis="0 0 1"/>')
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: g1.xml has 31 joints where the task needs 30, in "
        f"this order: the free joint, then one hinge per action (29 actions: left_hip_pitch_joint ... "
        f"right_wrist_yaw_joint): not the G1 model"])


@pytest.mark.parametrize("change, what", [
    (('<geom name="head_collision"', '<geom name="crown_collision"'), "g1_mjx.xml has no geom 'head_collision'"),
    (('<geom name="head_collision" class="collision" type="sphere" size="0.06" pos="0 0 .43"/>',
      '<geom name="head_collision" class="collision" type="sphere" size="0.06" pos="0 0 .43"/>'
      '<geom name="hat_collision" class="collision" type="sphere" size="0.06" pos="0 0 .5"/>'),
     "g1_mjx.xml has a collider 'hat_collision' the task's model does not have"),
])
def test_mjx_colliders_other_than_the_tasks_are_named(copy, tmp_path, capsys, change, what):
    edit(copy / "g1_mjx.xml", *change)
    suffix = "" if "does not have" in what else ", which the task needs"
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: {what}{suffix}: not the G1 model"])


def test_train_without_a_model_names_a_copy_that_is_not_the_g1_before_it_starts(copy, tmp_path, capsys):
    (copy / "g1.xml").write_text("<mujoco/>")
    run = tmp_path / "run"
    code = main(["train", "--devices", "cpu", "--iterations", "1", "--log-dir", str(run)])
    assert code == 2 and capsys.readouterr().err.strip().splitlines() == [
        f"sacscale train: error: no --model given, and the task's model cannot be built here: ${SETTING}={copy}: "
        f"g1.xml has no body 'pelvis', which the task needs: not the G1 model; or pass --model with a compiled "
        f"model (.mjb, as `sacscale prepare-model` writes)"]
    assert not run.exists()
