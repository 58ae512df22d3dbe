"""The run wrapper (sacscale.pipeline.run_record) as a script: the same entry point as
`sacscale record-run`, which the run rule calls."""

import sys

from sacscale.pipeline.run_record import main

if __name__ == "__main__":
    sys.exit(main())
