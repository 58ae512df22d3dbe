"""The report's figures are palette PNGs (a set's report must fit its size budget): a
figure with many lines comes out in at most PALETTE_COLOURS colours, smaller than the
RGBA one matplotlib writes, and still shows its lines' colours."""

import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from sacscale.report import plots


def test_a_figure_is_a_palette_png_smaller_than_matplotlibs(tmp_path):
    fig, ax = plt.subplots(figsize=(7, 4))
    rng = np.random.default_rng(0)
    for k in range(10):
        ax.plot(np.cumsum(rng.normal(size=400)), marker="o", ms=2, label=f"run {k}")
    ax.legend()
    fig.savefig(tmp_path / "rgba.png", dpi=110, bbox_inches="tight")
    path = tmp_path / "figures" / "lines.png"
    plots._save(fig, path)
    with Image.open(path) as image:
        assert image.mode == "P"
        colours = image.convert("RGB").getcolors(maxcolors=4096)
    assert colours is not None and len(colours) <= plots.PALETTE_COLOURS
    tab_blue = (31, 119, 180)  # the first line's colour survives the palette
    assert min(sum(abs(a - b) for a, b in zip(c, tab_blue)) for _, c in colours) <= 12
    assert path.stat().st_size < (tmp_path / "rgba.png").stat().st_size / 2
