"""`verify --redraw-figures`: the report's figures drawn again from the evidence verify has
just recomputed, and compared pixel for pixel with the ones in reports/<set>/figures.

The figures are written after the manifest, so no hash binds them; drawing them again is
the one check an edited figure cannot pass (its name chunk and drawing record can be
edited with it). Pixels, not bytes, are compared: the PNG encoder's compression may differ
between machines where the image does not. A figure drawn by other code or another
matplotlib cannot be drawn again here: it is named as unconfirmed with what drew it."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from sacscale.evidence.report_html import figures_shown
from sacscale.report.shown import long_paragraph
from sacscale.evidence.result import Verification
from sacscale.reading import open_record, read_limited
from sacscale.scratch import scratch_folder
from sacscale.report.build import draw_figures
from sacscale.report.figure_names import FIGURES, display_chunks, drawn_with
from sacscale.report.plots import drawing_record


def same_pixels(drawn: Path, shown: Path) -> bool:
    """The two images have the same size and pixels, transparency included (a browser shows
    a pixel made transparent as the page behind it); a file that is no image, or one far
    too large to be a figure (refused at its header), is not the figure drawn."""
    try:
        with open_record(shown) as stream, Image.open(drawn) as first, Image.open(stream) as second:
            if first.size != second.size:
                return False
            return first.convert("RGBA").tobytes() == second.convert("RGBA").tobytes()
    except (OSError, ValueError, Image.DecompressionBombError):
        return False


def shown_otherwise(drawn: Path, shown: Path) -> str | None:
    """Why a browser would show `shown` otherwise than its pixels say: no PNG, or chunks the
    figure drawn here lacks (a gamma or colour profile that recolours it, animation frames
    that replace it); None when it holds none."""
    try:
        theirs, ours = display_chunks(shown), display_chunks(drawn)
    except OSError:
        return None  # unreadable: the pixels differ
    if theirs is None:
        return "not a PNG image, as the report stage writes"
    extra = sorted({kind.decode("latin-1") for kind, crc in theirs if (kind, crc) not in (ours or [])})
    if extra:
        return (f"PNG chunk(s) {', '.join(repr(k) for k in extra)} that the figure drawn here lacks: they change "
                "how a browser shows the image (its colours, its frames), whatever its pixels")
    return None


def _difference(rel: str, name: str, recorded: str | None) -> str:
    here = drawing_record()
    if recorded == here:
        why = f"drawn by the same code and matplotlib as here ({here}): edited after the report was made?"
    elif recorded:
        why = f"drawn by {recorded[:100]!r}, here {here}: other code; redraw it at the set's commit to compare"
    else:
        why = f"no record of what drew it (a set made before figures carried one); here {here}"
    return f"{rel}/figures/{name}: not the figure the evidence draws here (its pixels differ; {why})"


def _left_out(reports: Path, rel: str, with_data: set[str]) -> list[str]:
    """Each page shows every figure the evidence has data for (the stage shows those, and a
    sentence instead of each other one): a figure's reference removed hid it unseen."""
    problems = []
    for page in ("report.md", "report.html"):
        try:
            text = read_limited(reports / page, within=reports).decode("utf-8")
        except (OSError, ValueError):
            continue  # named by the page's own checks
        if page.endswith(".md") and long_paragraph(text) is not None:
            continue  # likewise: not rendered
        hidden = sorted(with_data - figures_shown(text, markdown_page=page.endswith(".md")))
        if hidden:
            problems.append(f"{rel}/{page}: does not show {', '.join(h.removeprefix('figures/') for h in hidden)}, "
                            "which the evidence draws with data (the report stage shows it): does not match the "
                            "evidence")
    return problems


def check_redrawn_figures(reports: Path, rel: str, summary: dict, metrics: list[dict], run_dirs: list[Path],
                          result: Verification) -> None:
    """Draw the set's figures from the recomputed `summary` and `metrics` and the runs'
    event files into a scratch folder; each figure of the report that differs is a problem."""
    present = [name for name in sorted(FIGURES.values()) if (reports / "figures" / name).is_file()]
    with scratch_folder("sacscale-redraw-") as scratch:
        has = draw_figures(summary, metrics, scratch, run_dirs or None)[0]
        differ = [name for name in present
                  if not same_pixels(scratch / name, reports / "figures" / name)]
        otherwise = {name: why for name in present if name not in differ
                     and (why := shown_otherwise(scratch / name, reports / "figures" / name))}
    result.derived += [_difference(rel, name, drawn_with(reports / "figures" / name)) for name in differ]
    result.derived += [f"{rel}/figures/{name}: not shown as the figure the evidence draws here ({why})"
                       for name, why in otherwise.items()]
    differ += list(otherwise)
    result.derived += _left_out(reports, rel, {f"figures/{FIGURES[name]}" for name, data in has.items() if data})
    if not differ:
        result.checked.append(f"the {len(present)} figures of {rel}/figures (drawn again from the evidence: the "
                              "same pixels)")
