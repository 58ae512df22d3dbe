"""`sacscale analyze-run` of a run folder a trainer is training in (its trainer lock,
`.<name>.trainer-lock` beside it, held) is refused in one line naming the holder: the
figures of a run not finished (its last events, its exit status) would pass for the
run's own. Once the trainer has ended the same folder is analysed."""

import json
import subprocess
import sys

from sacscale.locks import TRAINER_LOCK, lock_file_beside
from synthetic_runs import linear_points, write_run

HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True); sys.stdin.read()")


def analyze(run_dir, out):
    return subprocess.run([sys.executable, "-m", "sacscale", "analyze-run", str(run_dir), "--output", str(out)],
                          capture_output=True, text=True, timeout=120)


def test_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    run = write_run(tmp_path / "rs", linear_points(8, 100.0, 1.0))
    out = tmp_path / "ar.json"
    trainer = subprocess.Popen([sys.executable, "-c", HOLD, str(run), TRAINER_LOCK],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert trainer.stdout.readline().strip() == "held"
        done = analyze(run, out)
    finally:
        trainer.communicate("", timeout=30)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"sacscale analyze-run: error: {run}: a sacscale train is training in this run folder now "
        f"(pid {trainer.pid} holds {lock_file_beside(run, TRAINER_LOCK)}); its figures would be of a run "
        "not finished: analyse it once its trainer has ended"]
    assert not out.exists()
    done = analyze(run, out)  # its trainer gone: the lock file it left is held by no one
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["run"] == "rs"
