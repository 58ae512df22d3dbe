"""`sacscale evaluate` and `sacscale compare-learning` of a run folder a trainer is training
in (its trainer lock, `.<name>.trainer-lock` beside it, held). Before: evaluate scored the
run's `checkpoints/final.pt` (the last checkpoint's, ~130 iterations into 100000) and
compare-learning drew its curves so far, both with no word that the run is still training.
Now both refuse it in one line naming the holder, as analyze-run does; once the trainer has
ended the same folder is read."""

import subprocess
import sys

from sacscale.locks import TRAINER_LOCK, lock_file_beside
from synthetic_runs import linear_points, write_run

HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True); sys.stdin.read()")


def sacscale(*argv):
    return subprocess.run([sys.executable, "-m", "sacscale", *map(str, argv)], capture_output=True, text=True,
                          timeout=120)


def while_trained(run, *argv):
    """`sacscale *argv` while another process holds the run's trainer lock; (done, its pid)."""
    trainer = subprocess.Popen([sys.executable, "-c", HOLD, str(run), TRAINER_LOCK],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert trainer.stdout.readline().strip() == "held"
        return sacscale(*argv), trainer.pid
    finally:
        trainer.communicate("", timeout=30)


def live_line(command, shown, run, pid, read, verb):
    return (f"sacscale {command}: error: {shown}: a sacscale train is training in this run folder now (pid {pid} "
            f"holds {lock_file_beside(run, TRAINER_LOCK)}); {read} would be of a run not finished: {verb} it once "
            "its trainer has ended")


def test_evaluate_of_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    run = write_run(tmp_path / "rs", linear_points(8, 100.0, 1.0))
    (run / "checkpoints").mkdir()
    out = tmp_path / "e.json"
    for given in (run, run / "checkpoints" / "final.pt"):
        done, pid = while_trained(run, "evaluate", given, "--output", out, "--envs-per-command", "1",
                                  "--threads", "1")
        assert done.returncode == 2
        assert done.stderr.splitlines() == [live_line("evaluate", run, run, pid, "its checkpoint", "evaluate")]
        assert not out.exists()
    done = sacscale("evaluate", run, "--output", out, "--envs-per-command", "1", "--threads", "1")
    assert "training in this run folder" not in done.stderr  # its trainer gone: on to its (missing) checkpoint
    assert "final.pt" in done.stderr and done.returncode == 2, done.stderr


def test_compare_learning_of_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    live = write_run(tmp_path / "live", linear_points(8, 100.0, 1.0))
    other = write_run(tmp_path / "done", linear_points(8, 100.0, 1.0))
    out = tmp_path / "cl.json"
    done, pid = while_trained(live, "compare-learning", f"b={other}", f"a={live}", "--output", out)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [live_line("compare-learning", f"a={live}", live, pid, "its curves",
                                                  "compare")]
    assert not out.exists()
    done = sacscale("compare-learning", f"b={other}", f"a={live}", "--output", out)
    assert done.returncode == 0, done.stderr
    assert out.exists()
