"""`python -m sacscale ...`: the same command as `sacscale ...`, for an environment whose
scripts folder is not on PATH. The working folder Python put first on the import path is
already off it (the package takes it off as it is imported: sacscale.safe_path)."""

from sacscale.cli import main

raise SystemExit(main())
