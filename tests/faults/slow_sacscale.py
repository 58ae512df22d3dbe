"""A stand-in `sacscale` for the pipeline-interruption tests: tests/workflow/fake_sacscale.py
(fake train/probe/prepare-model, the real package for the rest), plus one slow run.

FAKE_SLOW_RUN=<run name>: that run's training first touches $FAKE_MARKER_DIR/<name>.started
(outside the run directory, so it is not evidence) and sleeps FAKE_SLOW_S seconds (default:
an hour, i.e. until it is stopped), then trains like the other fake runs.
FAKE_SLOW_STEP=probe|prepare-model: that command the same way (marker <step>.started)."""

import os
import runpy
import sys
import time
from pathlib import Path

FAKE = Path(__file__).resolve().parents[1] / "workflow" / "fake_sacscale.py"

if __name__ == "__main__":
    args = sys.argv[1:]
    slow = os.environ.get("FAKE_SLOW_RUN")
    if args[:1] == ["train"] and slow and slow in Path(args[args.index("--log-dir") + 1]).name:
        marker = Path(os.environ["FAKE_MARKER_DIR"]) / f"{slow}.started"
        marker.write_text(str(os.getpid()))
        time.sleep(float(os.environ.get("FAKE_SLOW_S", "3600")))
    if args[:1] and args[0] == os.environ.get("FAKE_SLOW_STEP"):
        (Path(os.environ["FAKE_MARKER_DIR"]) / f"{args[0]}.started").write_text(str(os.getpid()))
        time.sleep(float(os.environ.get("FAKE_SLOW_S", "3600")))
    sys.argv = [str(FAKE), *args]
    runpy.run_path(str(FAKE), run_name="__main__")
