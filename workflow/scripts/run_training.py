"""The run rule's wrapper around `sacscale train`: see sacscale.pipeline.run_record."""

import sys

from sacscale.pipeline.run_record import main

if __name__ == "__main__":
    sys.exit(main())
