"""matplotlib's pyplot as the project draws with it: the Agg backend and matplotlib's own
defaults, whatever the user's configuration says. A `matplotlibrc` in the working
directory, MATPLOTLIBRC or MPLCONFIGDIR restyled every figure (so `verify --redraw-figures`
called a figure drawn from the evidence edited) or, with `text.usetex`, sent the names in
them to LaTeX; an MPLBACKEND matplotlib does not know failed its import.

matplotlib also keeps its font cache (which font file each family name is drawn from) in
its config folder, MPLCONFIGDIR or ~/.config/matplotlib, and trusts whatever it finds
there: with that folder in another user's hands, she could point "DejaVu Sans" at a font
of hers, and every figure (and each one `verify --redraw-figures` compares) would be drawn
with it. The folder is therefore always this user's private one (sacscale.locks'
private_folder: 0700, owner checked), whatever MPLCONFIGDIR says; it is kept between
processes, so the font cache is built once (seconds), not on every command."""

from __future__ import annotations

import errno
import os
import sys

from sacscale.locks import LockError, private_folder

CONFIG_VARIABLE = "MPLCONFIGDIR"


class UnsafeMatplotlibFolder(PermissionError):
    """matplotlib's private folder cannot be made safely (the lock folder is unsafe); the
    message says why and what to set (exit 2, one line)."""


def pyplot():
    """matplotlib.pyplot, on Agg, with matplotlib's defaults and names drawn as text (never TeX)."""
    unknown = os.environ.pop("MPLBACKEND", None)  # read and refused by `import matplotlib` itself
    given = os.environ.get(CONFIG_VARIABLE)
    try:
        if "matplotlib" not in sys.modules:  # matplotlib reads the folder once, when first imported
            os.environ[CONFIG_VARIABLE] = _private_config_folder()
        import matplotlib
        import matplotlib.font_manager  # noqa: F401  (the font cache, read from that folder now)
    finally:
        _restore(CONFIG_VARIABLE, given)  # the user's setting stays theirs for other programs
        if unknown is not None:
            os.environ["MPLBACKEND"] = unknown
    matplotlib.use("Agg")
    matplotlib.rcdefaults()
    # labels are names from configs and the command line: `$...$` in one is text, not TeX
    # (mathtext would render it, or fail the whole report on a symbol it does not know)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def _restore(variable: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = value


def _private_config_folder() -> str:
    try:
        return str(private_folder("matplotlib"))
    except LockError as exc:
        raise UnsafeMatplotlibFolder(errno.EPERM, f"matplotlib's font cache ({CONFIG_VARIABLE}) goes into this "
                                     f"user's private folder, which cannot be used: {exc}") from None
