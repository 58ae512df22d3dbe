"""The solver study's settings: one point of the sweep (a MuJoCo solver option set), the
default sweep, and the parser of `--setting` specs."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

OPTION_FIELDS = ("iterations", "ls_iterations", "tolerance")


@dataclass(frozen=True)
class SolverSetting:
    """One point of the sweep. The defaults are MuJoCo's, the task's own settings."""

    name: str
    iterations: int = 100
    ls_iterations: int = 50
    tolerance: float = 1e-8
    init_perturbation: float = 0.0  # rad added to every initial joint angle (a yardstick)

    def options(self) -> dict:
        return {k: getattr(self, k) for k in OPTION_FIELDS}

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


REFERENCE = SolverSetting("default")
# MuJoCo holds the iteration counts in a C int: past it, setting the option failed in its bindings
_MAX_SOLVER_COUNT = 2**31 - 1
# init_perturbation is a yardstick of TINY joint offsets (the sweep's own is 1e-9 rad): past
# 0.1 rad (about 6 degrees, five times the initial states' own spread) it is another starting
# pose, and 1e300 rad is no angle at all (MuJoCo found the state unstable and reset it)
_MAX_PERTURBATION = 0.1
# tolerance is the solver's relative precision: 1 or more asks for none (MuJoCo's default is 1e-8)
_MAX_TOLERANCE = 1.0


def default_sweep() -> list[SolverSetting]:
    """One factor at a time around the default, MJX's 5/8 pair, and the chaos yardstick."""
    return [
        REFERENCE,
        SolverSetting("iterations=50", iterations=50),
        SolverSetting("iterations=20", iterations=20),
        SolverSetting("iterations=10", iterations=10),
        SolverSetting("iterations=5", iterations=5),
        SolverSetting("ls_iterations=20", ls_iterations=20),
        SolverSetting("ls_iterations=8", ls_iterations=8),
        SolverSetting("tolerance=1e-6", tolerance=1e-6),
        SolverSetting("tolerance=1e-4", tolerance=1e-4),
        SolverSetting("iterations=5,ls_iterations=8", iterations=5, ls_iterations=8),
        SolverSetting("default, joints+1e-9 rad", init_perturbation=1e-9),
    ]


def parse_setting(spec: str) -> SolverSetting:
    """ "iterations=5,ls_iterations=8" -> SolverSetting; unknown keys, a key given twice (the
    later one replaced the earlier unseen), values that are not finite numbers (tolerance=inf
    made a solver of no iterations, recorded as null) and values past what the study means
    (see the bounds above) raise ValueError."""
    kwargs: dict = {}
    for part in spec.split(","):
        key, sep, value = part.strip().partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise ValueError(f"bad solver setting {part!r} in {spec!r}: expected key=value")
        if key in kwargs:
            raise ValueError(f"solver setting {key} is given twice in {spec!r}")
        try:
            if key in ("iterations", "ls_iterations"):
                kwargs[key] = int(value)
            elif key in ("tolerance", "init_perturbation"):
                kwargs[key] = float(value)
            else:
                raise ValueError(
                    f"unknown solver setting {key!r} in {spec!r}: "
                    "use iterations, ls_iterations, tolerance, init_perturbation"
                )
        except ValueError as e:
            if "unknown" in str(e):
                raise
            raise ValueError(f"bad value {value!r} for {key} in {spec!r}") from None
        if not math.isfinite(kwargs[key]):
            raise ValueError(f"bad value {value!r} for {key} in {spec!r}: not a finite number")
    setting = SolverSetting(spec.strip(), **kwargs)
    counts_ok = all(1 <= n <= _MAX_SOLVER_COUNT for n in (setting.iterations, setting.ls_iterations))
    if not counts_ok or not setting.tolerance >= 0:
        raise ValueError(f"{spec!r}: iterations and ls_iterations must be in [1, {_MAX_SOLVER_COUNT}] "
                         "(MuJoCo's int), tolerance >= 0")
    if setting.tolerance > _MAX_TOLERANCE:
        raise ValueError(f"{spec!r}: tolerance {setting.tolerance:g} is past {_MAX_TOLERANCE:g}, a solver "
                         "precision of none; for a solver that stops early give iterations=1")
    if abs(setting.init_perturbation) > _MAX_PERTURBATION:
        raise ValueError(f"{spec!r}: init_perturbation {setting.init_perturbation:g} rad is past "
                         f"+-{_MAX_PERTURBATION:g} rad: it is a yardstick of tiny joint offsets (the sweep's is 1e-9)")
    return setting
