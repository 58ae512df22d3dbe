"""model.json's MuJoCo version against the .mjb it describes: the version the file's header
names, or the one it loads into here. A claimed version does not switch the summary's
derivation off while the installed MuJoCo loads the file."""

import json
import struct

import pytest
from set_copies import REPO, copy_committed_set, edit_record, remake_manifest

from sacscale.evidence import model_record
from sacscale.evidence.mjb_header import saved_by
from sacscale.evidence.model_record import summary_findings
from sacscale.evidence.verify import verify

mujoco = pytest.importorskip("mujoco")

SET = "h200x1_shared_short"
MJB = "model/g1_walk_flat.mjb"


def _claim_version(root, version, **summary):
    """Every record that holds MuJoCo's version says `version`; summary fields changed too."""
    def model(record):
        record["mujoco_version"] = version
        record["summary"].update(mujoco_version=version, **summary)

    edit_record(root, "model.json", model)
    edit_record(root, "environment.json", lambda r: r["versions"].update(mujoco=version))


def _header_int(root, index, value):
    path = root / MJB
    data = bytearray(path.read_bytes())
    struct.pack_into("<i", data, 4 * index, value)
    path.write_bytes(bytes(data))


def test_the_committed_model_names_the_version_that_saved_it():
    assert saved_by(REPO / "results" / SET / MJB) == mujoco.__version__ == "4.0.0"


def test_a_version_rewritten_everywhere_is_named_and_the_summary_still_derived(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _claim_version(root, "3.3.7", nu=12)
    remake_manifest(root)
    result = verify(root, report_pending=True)
    assert "model: model.json mujoco_version '3.3.7', but model/g1_walk_flat.mjb's header says MuJoCo 4.0.0 " \
           "saved it" in result.records
    assert "model: model.json summary.nu: stored 12, model/g1_walk_flat.mjb gives 29" in result.records
    assert not [c for c in result.covered if "not derived" in c], result.covered


def test_a_model_saved_by_another_version_is_said_not_derived(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _header_int(root, 3, 3_005_000)
    model = json.loads((root / "model.json").read_text())
    problems, not_derived = summary_findings(root, {**model, "mujoco_version": "3.5.0"})
    assert problems == [] and not_derived == [
        "model.json summary: not derived from model/g1_walk_flat.mjb: its header says MuJoCo 3.5.0 saved it, "
        "MuJoCo 4.0.0 is installed here (a .mjb loads only into its own version)"]


def test_a_file_of_an_older_mujoco_that_does_not_load_is_said_not_derived(tmp_path):
    """Older MuJoCo wrote a field count where the version now stands: the file names none."""
    root = copy_committed_set(tmp_path, SET)
    _header_int(root, 3, 90)
    model = json.loads((root / "model.json").read_text())
    problems, not_derived = summary_findings(root, {**model, "mujoco_version": "3.2.0"})
    assert problems == [] and not_derived == [
        "model.json summary: not derived from model/g1_walk_flat.mjb: MuJoCo 4.0.0 is installed here, the model "
        "was saved by 3.2.0 (model.json; the file's header names no version, and it does not load here)"]


def test_a_version_other_than_the_one_the_file_loads_into_is_named(monkeypatch):
    """Where the header names no version (an older MuJoCo installed), the load decides."""
    monkeypatch.setattr(model_record, "saved_by", lambda path: None)
    root = REPO / "results" / SET
    model = json.loads((root / "model.json").read_text())
    problems, not_derived = summary_findings(root, {**model, "mujoco_version": "3.3.7"})
    assert not_derived == [] and problems == [
        "model: model.json mujoco_version '3.3.7', but model/g1_walk_flat.mjb loads into MuJoCo 4.0.0 here (a .mjb "
        "loads only into the version that saved it)"]
