"""`python -m sacscale ...`: the same command as `sacscale ...`, for an environment whose
scripts folder is not on PATH."""

from sacscale.cli import main

raise SystemExit(main())
