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

    def envs_per_call(self, cpus_at_work: int) -> int:
        """Envs one MuJoCo call steps, so that a call lasts about a second at most (above)."""
        work = self.iterations * (10 + self.ls_iterations)
        return max(1, _SLICE_WORK // work) * max(1, cpus_at_work)


REFERENCE = SolverSetting("default")
# The counts a study means: up to 10x MuJoCo's iterations (100) and 2x its ls_iterations (50).
# One control step runs inside MuJoCo's C code, where no stop signal is acted on until it
# returns: with tolerance 0 every iteration runs, and 2**31-1 of each ran for hours, deaf to
# SIGTERM. At these bounds a step of the G1 model takes about 0.2 CPU-s per env (10000 and
# 10000 took 60 s per env), so a stop ends the command within one step.
_MAX_ITERATIONS = 1000
_MAX_LS_ITERATIONS = 100
# The study steps its envs in slices, so that a stop is acted on between MuJoCo calls (one
# call of 3000 envs at the bounds ran for minutes). A slice holds about _SLICE_WORK units of
# iterations x (10 + ls_iterations) per CPU: with tolerance 0 (every iteration run) a unit
# cost about 0.5 us of CPU here (an env step of 1000/100 took 40-64 ms, 100/50 2.5 ms, 1000/1
# 6 ms), so a slice at the bounds (18 envs a CPU) is about 1 s, and MuJoCo's defaults step
# 333 envs a CPU in one call (the study's default 256 envs: one call, as before).
_SLICE_WORK = 2_000_000
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


def _ascii_number(key: str, value: str, spec: str) -> None:
    """int() and float() also read full-width and other scripts' digits and '1_0'; the
    setting is recorded as typed, so its label would not be the spelling the docs give."""
    if key in ("iterations", "ls_iterations"):
        if not (value.isascii() and value.isdigit()):
            raise ValueError(f"bad value {value!r} for {key} in {spec!r}: a whole number in ASCII digits (0-9)")
    elif key in ("tolerance", "init_perturbation") and (not value.isascii() or "_" in value):
        raise ValueError(f"bad value {value!r} for {key} in {spec!r}: a number in ASCII (0-9, e.g. 1e-6)")


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
        _ascii_number(key, value.strip(), spec)
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
    if not 1 <= setting.iterations <= _MAX_ITERATIONS or not 1 <= setting.ls_iterations <= _MAX_LS_ITERATIONS:
        raise ValueError(f"{spec!r}: iterations must be in [1, {_MAX_ITERATIONS}] and ls_iterations in "
                         f"[1, {_MAX_LS_ITERATIONS}] (10x and 2x MuJoCo's 100 and 50: a step past them runs for "
                         "minutes inside MuJoCo, where a stop cannot reach it)")
    if not setting.tolerance >= 0:
        raise ValueError(f"{spec!r}: tolerance must be >= 0")
    if setting.tolerance > _MAX_TOLERANCE:
        raise ValueError(f"{spec!r}: tolerance {setting.tolerance:g} is past {_MAX_TOLERANCE:g}, a solver "
                         "precision of none; for a solver that stops early give iterations=1")
    if abs(setting.init_perturbation) > _MAX_PERTURBATION:
        raise ValueError(f"{spec!r}: init_perturbation {setting.init_perturbation:g} rad is past "
                         f"+-{_MAX_PERTURBATION:g} rad: it is a yardstick of tiny joint offsets (the sweep's is 1e-9)")
    return setting
