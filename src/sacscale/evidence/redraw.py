"""`verify --redraw-figures`: the report's figures drawn again from the evidence verify has
just recomputed, and compared pixel for pixel with the ones in reports/<set>/figures.

The figures are written after the manifest, so no hash binds them; drawing them again is
the one check an edited figure cannot pass (its name chunk and drawing record can be
edited with it). Pixels, not bytes, are compared: the PNG encoder's compression may differ
between machines where the image does not. A figure drawn by other code or another
matplotlib cannot be drawn again here: it is named as unconfirmed with what drew it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from PIL import Image

from sacscale.evidence.result import Verification
from sacscale.report.build import draw_figures
from sacscale.report.figure_names import FIGURES, drawn_with
from sacscale.report.plots import drawing_record


def same_pixels(drawn: Path, shown: Path) -> bool:
    """The two images have the same size and pixels; a file that is no image, or one far too
    large to be a figure (refused at its header), is not the figure drawn."""
    try:
        with Image.open(drawn) as first, Image.open(shown) as second:
            if first.size != second.size:
                return False
            return first.convert("RGB").tobytes() == second.convert("RGB").tobytes()
    except (OSError, ValueError, Image.DecompressionBombError):
        return False


def _difference(rel: str, name: str, recorded: str | None) -> str:
    here = drawing_record()
    if recorded == here:
        why = f"drawn by the same code and matplotlib as here ({here}): edited after the report was made?"
    elif recorded:
        why = f"drawn by {recorded[:100]!r}, here {here}: other code; redraw it at the set's commit to compare"
    else:
        why = f"no record of what drew it (a set made before figures carried one); here {here}"
    return f"{rel}/figures/{name}: not the figure the evidence draws here (its pixels differ; {why})"


def check_redrawn_figures(reports: Path, rel: str, summary: dict, metrics: list[dict], run_dirs: list[Path],
                          result: Verification) -> None:
    """Draw the set's figures from the recomputed `summary` and `metrics` and the runs'
    event files into a scratch folder; each figure of the report that differs is a problem."""
    present = [name for name in sorted(FIGURES.values()) if (reports / "figures" / name).is_file()]
    with tempfile.TemporaryDirectory(prefix="sacscale-redraw-") as scratch:
        draw_figures(summary, metrics, Path(scratch), run_dirs or None)
        differ = [name for name in present
                  if not same_pixels(Path(scratch) / name, reports / "figures" / name)]
    result.derived += [_difference(rel, name, drawn_with(reports / "figures" / name)) for name in differ]
    if not differ:
        result.checked.append(f"the {len(present)} figures of {rel}/figures (drawn again from the evidence: the "
                              "same pixels)")
