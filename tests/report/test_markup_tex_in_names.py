"""Markup: a name with `$...$` (a config or run label) was
read by matplotlib as TeX (mathtext): drawn as math, or, with a command it does not know
(`$\\href{x}{y}$`), the whole report or figure failed (`ParseFatalException`, exit 1 as
unexpected). Names in figures are now text."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "results" / "h200x1_shared_short" / "runs" / "shared_r1_n1_pool7"


def test_a_label_with_tex_in_it_is_drawn_as_text(tmp_path):
    figure = tmp_path / "c.png"
    argv = ["compare-learning", "--output", str(tmp_path / "c.json"), "--figure", str(figure),
            f"$\\href{{x}}{{y}}$={RUN}"]
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert figure.stat().st_size > 0


def test_the_figures_modules_read_no_tex():
    import matplotlib

    from sacscale.report import plots  # noqa: F401
    assert matplotlib.rcParams["text.parse_math"] is False
