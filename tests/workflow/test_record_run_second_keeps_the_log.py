"""A second invocation of a run that is training (`snakemake --nolock`, or one past the
checkout's lock) is refused by the run's locks, but the rule's log was truncated by its shell
redirection (and removed by Snakemake's `log:`) before record-run was reached: the first run's
log was lost. Now record-run opens the log itself (`--log`), once it holds the run's locks, and
the run rule names it so: the second is refused and the first's log is whole. (Snakemake's own
removal of a rule's `log:` before its job is what its checkout lock guards against.)"""

import os
import subprocess
import sys

from pipeline_helpers import REPO
from test_record_run_one_at_a_time import WAIT_S, record_run_cmd, wait_for

# A stand-in trainer that says something into the log, then waits for the test's go file.
TRAIN = """
import sys, time, pathlib
args = sys.argv[1:]
d = pathlib.Path(args[args.index("--log-dir") + 1])
go = pathlib.Path(args[args.index("--go") + 1])
print("the first trainer's output", flush=True)
go.with_suffix(".started").write_text("started")
while not go.exists():
    time.sleep(0.05)
(d / "tb" / "rank0").mkdir(parents=True)
(d / "tb" / "rank0" / "events.out.tfevents.1.x").write_bytes(b"x")
"""


def with_log(cmd: list[str], log) -> list[str]:
    cut = cmd.index("--")
    return [*cmd[:cut], "--log", str(log), "--", sys.executable, "-c", TRAIN, *cmd[cut + 3:]]


def test_a_second_record_run_of_a_live_run_leaves_its_log_whole(tmp_path):
    runs, log = tmp_path / "results" / "S" / "runs", tmp_path / "logs" / "S" / "train" / "p_r1_n1.log"
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "first")
    first = subprocess.Popen(with_log(cmd, log), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(go.with_suffix(".started"), first)
        inode = os.stat(log).st_ino
        second_cmd, _ = record_run_cmd(tmp_path, run_dir, work, "second")
        second = subprocess.run(with_log(second_cmd, log), capture_output=True, text=True, timeout=WAIT_S)
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert "is being recorded by another record-run" in second.stderr and second.stdout == ""
        assert os.stat(log).st_ino == inode and "the first trainer's output" in log.read_text()
        go.write_text("go")
        assert first.wait(WAIT_S) == 0, first.stderr.read()
    finally:
        first.kill()
        first.wait()
    assert os.stat(log).st_ino == inode and "the first trainer's output" in log.read_text()
    assert (run_dir / "run.json").is_file()


def test_a_log_that_cannot_be_opened_is_one_line_and_nothing_is_started(tmp_path):
    (tmp_path / "blocked").write_text("a file where the log's folder would be")
    cmd, go = record_run_cmd(tmp_path, tmp_path / "runs" / "r", tmp_path / "runs" / ".r.partial", "t")
    go.write_text("go")
    proc = subprocess.run(with_log(cmd, tmp_path / "blocked" / "r.log"), capture_output=True, text=True,
                          timeout=WAIT_S)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"sacscale record-run: --log {tmp_path / 'blocked'}: ")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "runs" / "r").exists() and not (tmp_path / "runs" / ".r.partial").exists()


def test_the_run_rule_has_record_run_open_its_log():
    rule = (REPO / "workflow" / "rules" / "train.smk").read_text()
    train_run = rule[rule.index("rule train_run:"):rule.index("rule train:")]
    assert "--log {log:q}" in train_run and "> {log}" not in train_run
