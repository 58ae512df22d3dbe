"""environment.json's `versions`: each the version of the package that `import` loads, read
from its installed distribution without importing it, or from the module where no
installed distribution holds what Python would load."""

import json
import os
import subprocess
import sys

MAIN = ["torch", "mujoco", "snakemake", "numpy", "tensorboard", "pandas", "matplotlib"]
# slow to import, and needed by nothing else verify-env does (torch and mujoco are read from
# the modules themselves: the trainer and the model record theirs so)
NOT_NEEDED = ["pandas", "matplotlib", "tensorboard", "snakemake"]


def _in_fresh_python(code: str, *path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


READ = """
import importlib, json, sys
from sacscale.pipeline.environment import _version
names = {names!r}
versions = {{name: _version(name) for name in names}}
imported = [name for name in names if name in sys.modules]
modules = {{name: getattr(importlib.import_module(name), "__version__", "unknown") for name in names if versions[name]}}
print(json.dumps({{"versions": versions, "imported": imported, "modules": modules}}))
"""


def test_the_main_versions_are_the_modules_own_and_read_without_importing_them():
    got = _in_fresh_python(READ.format(names=MAIN))
    assert all(got["versions"].values()), got["versions"]
    assert got["versions"] == got["modules"]
    assert not set(got["imported"]) & set(NOT_NEEDED), got["imported"]


def _package(folder, name, version, installed):
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(f"__version__ = {version!r}\n")
    if installed:
        info = folder / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_an_installed_package_is_read_from_its_distribution(tmp_path):
    _package(tmp_path / "site", "sacscale_probe_pkg", "1.0", installed=True)
    got = _in_fresh_python(READ.format(names=["sacscale_probe_pkg", "sacscale_no_such_pkg"]), tmp_path / "site")
    assert got["versions"] == {"sacscale_probe_pkg": "1.0", "sacscale_no_such_pkg": None}
    assert got["imported"] == []


def test_a_source_tree_before_the_installed_copy_gives_its_own_version(tmp_path):
    # `import` loads the tree's code, not the distribution's: the tree's __version__ is recorded
    _package(tmp_path / "site", "sacscale_probe_pkg", "1.0", installed=True)
    _package(tmp_path / "tree", "sacscale_probe_pkg", "2.0.dev0", installed=False)
    got = _in_fresh_python(READ.format(names=["sacscale_probe_pkg"]), tmp_path / "tree", tmp_path / "site")
    assert got["versions"] == {"sacscale_probe_pkg": "2.0.dev0"}
