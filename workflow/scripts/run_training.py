"""The run rule's wrapper around `sacscale train`: see sacscale.evidence.record."""

import sys

from sacscale.evidence.record import main

if __name__ == "__main__":
    sys.exit(main())
