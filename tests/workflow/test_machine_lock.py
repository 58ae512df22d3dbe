"""Two pipeline invocations (different run sets, one checkout) never train at once: the run
wrapper, as the run rule calls it (`--machine-lock`), holds this user's machine-wide
training lock for the whole run; a second run is refused at once, naming the run that
holds it, before anything is moved or started."""

import json
import subprocess
import sys
import time

from pipeline_helpers import REPO

HOLD = """
import sys, time
from sacscale.pipeline.machine_lock import training_machine
with training_machine(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    time.sleep(60)
"""

TRAIN = "import sys, pathlib; d = pathlib.Path(sys.argv[sys.argv.index('--log-dir') + 1]); " \
        "(d / 'tb' / 'rank0').mkdir(parents=True); (d / 'tb' / 'rank0' / 'events.out.tfevents.1.x').write_bytes(b'x')"


def record_run(tmp_path, run="q_r1_n1"):
    run_dir = tmp_path / "results" / "B" / "runs" / run
    work = tmp_path / "results" / "B" / "runs" / f".{run}.partial"
    resolved = json.dumps({"run": run, "run_set": "B", "seed": 1})
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(run_dir), "--work-dir", str(work),
           "--attic", str(tmp_path / "logs" / "attempts"), "--resolved-json", resolved, "--timeout", "60",
           "--machine-lock", "--", sys.executable, "-c", TRAIN, "--log-dir", str(work)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - t0, run_dir, work


def test_a_second_invocations_run_is_refused_naming_the_first(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "p_r2_n2", "A"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc, took, run_dir, work = record_run(tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert f"run q_r1_n1 not started: this machine's training lock is held by pid {holder.pid} " \
               "(run p_r2_n2, set A)" in proc.stderr
        assert "Traceback" not in proc.stderr and took < 30
        assert not run_dir.exists() and not work.exists() and not (tmp_path / "logs").exists()
    finally:
        holder.kill()
        holder.wait()
    proc, _, run_dir, _ = record_run(tmp_path)  # the holder gone, the same run goes ahead
    assert proc.returncode == 0, proc.stderr
    assert (run_dir / "run.json").is_file()


def test_the_run_rule_takes_the_machine_lock():
    rule = (REPO / "workflow" / "rules" / "train.smk").read_text()
    assert "sacscale record-run " in rule and " --machine-lock " in rule


def test_bad_wrapper_arguments_are_one_line_before_anything_is_moved(tmp_path):
    base = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(tmp_path / "r"),
            "--work-dir", str(tmp_path / ".r"), "--attic", str(tmp_path / "attic")]
    for extra, message in ((["--timeout", "nan"], "--timeout nan: must be a positive, finite number"),
                           (["--timeout", "5", "--resolved-json", "[1"], "--resolved-json: not JSON"),
                           (["--timeout", "5", "--resolved-json", "[1]"], "--resolved-json: not a JSON object")):
        proc = subprocess.run([*base, *extra, "--", "true"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []
