"""The plan's model (config `model`): a `from_mjb` file is judged at planning as
prepare-model judges it later (a plain file, this user's own, one MuJoCo loads, the G1 task's
model), so a bad one is named before the environment check, the model step and the probe
have run."""

from __future__ import annotations

import os
import stat

from sacscale.checks import InputError, check_model
from sacscale.eval.evaluate_checks import CheckpointError, read_input
from sacscale.pipeline.config_check import ConfigError, refuse_others_file
from sacscale.pipeline.plan_values import PlanError


def resolve_model(preset: dict, config: dict, check_host: bool) -> dict:
    """The preset's model settings with the config's over them, the file checked where it is
    on this machine (`check_host`). A `~` path is expanded, as a run's env paths are: the
    model step and its inputs take the path as written, where no shell expands it."""
    model = {**(preset.get("model") or {}), **(config.get("model") or {})}
    if isinstance(model.get("from_mjb"), str) and model["from_mjb"].startswith("~"):
        model["from_mjb"] = os.path.expanduser(model["from_mjb"])
    if model.get("from_mjb") and check_host and not os.path.isfile(model["from_mjb"]):
        raise PlanError(f"model.from_mjb: {model['from_mjb']} {_not_a_file(model['from_mjb'])}")
    if model.get("from_mjb") and check_host:
        _refuse_others_model(model["from_mjb"])
        _refuse_unloadable(model["from_mjb"])
    return model


def _refuse_others_model(path: str) -> None:
    """PlanError where another user owns or may change the model file, or may swap another
    in at its name (config files' rule): prepare-model builds every run's model from it."""
    try:
        refuse_others_file(path, "model file", "every run of the set trains on the model prepared from it, as "
                           "this user's own", swapped_when="before prepare-model reads it")
    except ConfigError as exc:
        raise PlanError(f"model.from_mjb: {exc}") from None


def _refuse_unloadable(path: str) -> None:
    """PlanError where MuJoCo cannot load the file (truncated, or not a compiled model), or
    where what it loads is not the G1 task's model (another body, a ball): judged here as
    prepare-model judges it (sacscale.checks.check_model, a 2-env task built from it), where
    prepare-model refused it only after the set's first steps."""
    from sacscale.mujoco_lib import load_mjb, mujoco  # here only: a config without from_mjb plans without MuJoCo

    try:
        data = read_input(path, "model")  # read within the model bound, as prepare-model reads it
        load_mjb(path, data)
    except CheckpointError as exc:
        raise PlanError(f"model.from_mjb: {exc}") from None
    except (ValueError, mujoco.FatalError) as exc:
        raise PlanError(f"model.from_mjb: {path}: not a loadable compiled MuJoCo model (.mjb; truncated or "
                        f"another format?): {' '.join(str(exc).split())[:300]}") from None
    try:
        check_model(path, data)
    except InputError as exc:  # said of prepare-model's --model: here the config's key
        raise PlanError(f"model.from_mjb: {str(exc).removeprefix('--model ')}") from None


def _not_a_file(path: str) -> str:
    """What stands at `path` instead of a model file (a FIFO, a folder was called missing)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "does not exist"
    kinds = {stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device",
             stat.S_ISSOCK: "a socket"}
    kind = next((name for test, name in kinds.items() if test(mode)), "no plain file")
    return f"is {kind}, not a model file (.mjb)"
