"""A report whose figures folder is another command's live output folder. Before: report B
`--output-dir rp2` while report A wrote into `rp2/figures`: only B's folder and those above
were looked at, so both exited 0 and B's PNGs landed among A's report. Now every folder the
report moves files into is looked at for a lock another process holds: B is refused in one
line naming its figures folder and the holder, exit 2, nothing written."""

import subprocess
import sys
from pathlib import Path

from cli_runs import one_line, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"
HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1])):\n    print('held', flush=True); sys.stdin.read()")


def test_a_report_whose_figures_folder_is_live_is_refused(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "rp2"
    figures = out / "figures"
    figures.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(figures)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = sacscale("report", "--run-set", root, "--output-dir", out)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    lock = out / ".figures.lock"
    one_line(done, f"sacscale report: --output-dir {out} (its folder {figures}): is or lies inside {figures}, "
                   f"where another sacscale command (a record-run perhaps) is at work (pid {holder.pid} holds {lock})")
    assert sorted(p.name for p in out.iterdir()) == ["figures"] and list(figures.iterdir()) == []
