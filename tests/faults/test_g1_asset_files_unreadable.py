"""SACSCALE_G1_ASSETS naming a copy whose g1_mjx.xml (or g1.xml) is missing, not XML, or
not a MuJoCo model: prepare-model failed on MuJoCo's own error under the catch-all
(`ValueError: XML parse error 6: ... (unexpected ...)`, rc 1), naming neither the file nor
the setting, and a train without --model passed its checks to fail in the collectors. Now
one line names the setting, the file and MuJoCo's reason, exit 2, with nothing made."""

import shutil

import pytest

from sacscale.cli import main
from sacscale.task import g1_model

SETTING = "SACSCALE_G1_ASSETS"
FILES = ("g1.xml", "g1_mjx.xml")  # what the build reads (its meshes under assets/)


@pytest.fixture
def copy(tmp_path, monkeypatch):
    return copy_of_the_g1_folder(tmp_path, monkeypatch)


def copy_of_the_g1_folder(tmp_path, monkeypatch):
    """A copy of the G1 folder: its XML files, its meshes through a link; named by the setting."""
    monkeypatch.delenv(SETTING, raising=False)
    installed = g1_model.asset_dir()
    folder = tmp_path / "g1"
    folder.mkdir()
    for name in FILES:
        shutil.copy(installed / name, folder / name)
    (folder / "assets").symlink_to(installed / "assets")
    monkeypatch.setenv(SETTING, str(folder))
    return folder


def prepare_model(tmp_path, capsys) -> tuple[int, list[str]]:
    out = tmp_path / "pm"
    code = main(["prepare-model", "--output-dir", str(out), "--num-envs", "2", "--steps", "2"])
    assert not out.exists(), "a refused build left its output folder"
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("name", FILES)
def test_a_copy_whose_file_is_not_xml_names_the_setting_and_the_file(copy, tmp_path, capsys, name):
    (copy / name).write_text("<mujoco><bad")
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: {name} is not a MuJoCo model MuJoCo can read "
        f"(XML parse error 6: Error=XML_ERROR_PARSING_ELEMENT ErrorID=6 (0x6) Line number=1: XMLElement name=bad)"])


def test_a_copy_whose_mjx_file_is_no_mujoco_model_is_named(copy, tmp_path, capsys):
    (copy / "g1_mjx.xml").write_text("<foo/>")
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: g1_mjx.xml is not a MuJoCo model MuJoCo can read "
        f"(XML Error: Unrecognized XML model type: 'foo')"])


def test_a_copy_without_its_mjx_file_is_named(copy, tmp_path, capsys):
    (copy / "g1_mjx.xml").unlink()
    assert prepare_model(tmp_path, capsys) == (2, [
        f"sacscale prepare-model: error: ${SETTING}={copy}: no g1_mjx.xml there (it names a copy of the asset "
        f"package's {g1_model.G1_SUBDIR} folder)"])


def test_train_without_a_model_names_the_broken_copy_before_it_starts(copy, tmp_path, capsys):
    (copy / "g1_mjx.xml").write_text("<mujoco><bad")
    run = tmp_path / "run"
    code = main(["train", "--devices", "cpu", "--iterations", "1", "--log-dir", str(run)])
    assert code == 2 and capsys.readouterr().err.strip().splitlines() == [
        f"sacscale train: error: no --model given, and the task's model cannot be built here: ${SETTING}={copy}: "
        f"g1_mjx.xml is not a MuJoCo model MuJoCo can read (XML parse error 6: Error=XML_ERROR_PARSING_ELEMENT "
        f"ErrorID=6 (0x6) Line number=1: XMLElement name=bad); or pass --model with a compiled model (.mjb, as "
        f"`sacscale prepare-model` writes)"]
    assert not run.exists()


def test_a_whole_copy_builds_the_model(copy, tmp_path, capsys):
    out = tmp_path / "pm"
    assert main(["prepare-model", "--output-dir", str(out), "--num-envs", "2", "--steps", "2"]) == 0, \
        capsys.readouterr().err
    assert (out / "g1_walk_flat.mjb").is_file()
