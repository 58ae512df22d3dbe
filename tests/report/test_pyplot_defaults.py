"""The figures are drawn with matplotlib's own defaults: a
`matplotlibrc` in the working directory restyled every figure (so `verify
--redraw-figures` called figures drawn from the evidence edited) and with `text.usetex`
sent the names in them to LaTeX (exit 1 without it); an MPLBACKEND matplotlib does not
know failed the import of the drawing code (verify: `unexpected structure in the set's
JSON`)."""

import os
import subprocess
import sys

SHOW = ("import sacscale.report.plots, matplotlib as m; "
        "print(m.rcParams['axes.facecolor'], m.rcParams['text.usetex'], m.rcParams['text.parse_math'], "
        "m.get_backend().lower())")


def test_the_users_matplotlib_configuration_does_not_reach_the_figures(tmp_path):
    (tmp_path / "matplotlibrc").write_text("axes.facecolor: red\ntext.usetex: True\n")
    env = {**os.environ, "MPLBACKEND": "no-such-backend", "MPLCONFIGDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", SHOW], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["white", "False", "False", "agg"]
