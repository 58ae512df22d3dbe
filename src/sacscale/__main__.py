"""`python -m sacscale ...`: the same command as `sacscale ...`, for an environment whose
scripts folder is not on PATH. The working folder Python put first on the import path is
already off it (the package takes it off as it is imported: sacscale.safe_path), but Python
read a few standard modules, or a planted `sacscale/` package, from it before that: only
`sacscale` and `python -P -m sacscale` are safe to run from a folder another user can write."""

from sacscale.cli import main

raise SystemExit(main())
