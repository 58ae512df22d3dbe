"""`learner-bench`: its --extra refuses the settings its own options set, as train's does
(`{"batch_size": 2048}` was silently replaced by --batch; `{"replay_per_env": 1}` ended in the
learner's ValueError, as unexpected), a learning start the replay cannot hold is named, and
its --out is under the CLI's output rules: a folder is refused before the benchmark runs (it
was refused after it, minutes on a GPU), and another command writing the same file meanwhile
is refused at once (plan-matrix's plan was replaced by the timings, both exit 0)."""

import time

import pytest
from cli_runs import REPO, one_line, sacscale
from paused_runs import finished, started_paused

BENCH = ["learner-bench", "--modes", "eager", "--batch", "8", "--iters", "1", "--warmup", "0", "--num-envs", "8",
         "--device", "cpu"]
TOPOLOGY = REPO / "tests" / "parallel" / "fixtures" / "topology"
OWN = "set by learner-bench's own option {} (which the benchmark's results read); give it there, not in --extra"


@pytest.mark.parametrize("extra, says", [
    ('{"replay_per_env": 1}', "--extra replay_per_env: " + OWN.format("--num-envs, at 512 rows per env")),
    ('{"batch_size": 2048}', "--extra batch_size: " + OWN.format("--batch")),
    ('{"learning_starts": 100000}', "learning starts at 100000 rows (--extra learning_starts) but the replay holds "
                                    "4096 rows (512 per env x --num-envs 8)"),
    ('{"mean_clip": -1}', "--extra mean_clip must be in [0.1, 100], got -1"),
])
def test_settings_of_its_own_options_and_a_replay_too_small_are_named(tmp_path, extra, says):
    done = sacscale(*BENCH, "--extra", extra, "--out", tmp_path / "o.json")
    one_line(done, f"sacscale learner-bench: error: {says}")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_as_out_is_refused_before_the_benchmark(tmp_path):
    t0 = time.monotonic()
    done = sacscale(*BENCH[:-6], "--iters", "1000000", "--num-envs", "8", "--device", "cpu", "--out", tmp_path)
    one_line(done, f"error: --out {tmp_path}: is a folder, not a file; this option is a file: give its name")
    assert time.monotonic() - t0 < 60 and list(tmp_path.iterdir()) == []


def test_plan_matrix_into_the_file_a_benchmark_is_writing_is_refused(tmp_path):
    out = tmp_path / "same.json"
    first = started_paused(tmp_path, "sacscale.learn.bench:bench_learner", *BENCH, "--out", out)
    second = sacscale("plan-matrix", "--lscpu", TOPOLOGY / "h200x1.lscpu", "--nvidia-smi-topo",
                      TOPOLOGY / "h200x1.topo", "--output", out)
    one_line(second, f"error: --output {out}: another sacscale command is writing this output (pid {first.pid} "
                     f"holds {tmp_path}/.same.json.lock); nothing was written")
    assert not out.exists()
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert '"ms_per_iter"' in out.read_text() and not list(tmp_path.glob(".*.lock"))
