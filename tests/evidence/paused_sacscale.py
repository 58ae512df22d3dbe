"""`sacscale` that stops once at a named function, for tests of two commands at once.

PAUSE_AT=<module>:<function> (a function the command looks up in its module when it calls
it): on the first call this process touches PAUSE_MARKER, waits until PAUSE_GO exists (at
most PAUSE_MAX_S seconds, default 120), then calls the function. Whatever holds meanwhile
(a lock) is held while the test runs the other command: no timing decides the order."""

import importlib
import os
import sys
import time
from pathlib import Path

from sacscale.cli import main


def _pause_at(where: str) -> None:
    module_name, name = where.split(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    paused = []

    def waiting(*args, **kwargs):
        if not paused:
            paused.append(True)
            Path(os.environ["PAUSE_MARKER"]).touch()
            deadline = time.monotonic() + float(os.environ.get("PAUSE_MAX_S", "120"))
            while not Path(os.environ["PAUSE_GO"]).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return original(*args, **kwargs)

    setattr(module, name, waiting)


if __name__ == "__main__":
    _pause_at(os.environ["PAUSE_AT"])
    sys.exit(main(sys.argv[1:]))
