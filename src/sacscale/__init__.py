"""sacscale: data-parallel FastSAC on a CPU-MuJoCo Unitree G1 (G1WalkFlat)."""

import sys

__version__ = "0.1.0"

# `python -m sacscale ...`: Python names the module "-m" while it imports this package, with
# the working folder first on sys.path; taken off before any other module is read from it
if sys.argv[:1] == ["-m"]:
    from sacscale.safe_path import module_runner_problem

    if problem := module_runner_problem():
        print(problem, file=sys.stderr)
        raise SystemExit(2)

# before any command, `--version` and `--help` included: a code cache another user may write
# (Python has loaded this package from a bytecode prefix by now: the line says so)
from sacscale.pipeline.inherited_caches import entry_refusal  # noqa: E402

if refusal := entry_refusal():
    print(refusal, file=sys.stderr)
    raise SystemExit(2)
