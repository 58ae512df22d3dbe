"""matplotlib's pyplot as the project draws with it: the Agg backend and matplotlib's own
defaults, whatever the user's configuration says. A `matplotlibrc` in the working
directory, MATPLOTLIBRC or MPLCONFIGDIR restyled every figure (so `verify --redraw-figures`
called a figure drawn from the evidence edited) or, with `text.usetex`, sent the names in
them to LaTeX; an MPLBACKEND matplotlib does not know failed its import."""

from __future__ import annotations

import os


def pyplot():
    """matplotlib.pyplot, on Agg, with matplotlib's defaults and names drawn as text (never TeX)."""
    unknown = os.environ.pop("MPLBACKEND", None)  # read and refused by `import matplotlib` itself
    try:
        import matplotlib
    finally:
        if unknown is not None:
            os.environ["MPLBACKEND"] = unknown
    matplotlib.use("Agg")
    matplotlib.rcdefaults()
    # labels are names from configs and the command line: `$...$` in one is text, not TeX
    # (mathtext would render it, or fail the whole report on a symbol it does not know)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt
