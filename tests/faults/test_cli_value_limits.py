"""Command-line values and outputs (docs/faults.md row 21): values past what the code can
size (a 1e308-second video, 10^11 simulations or threads) or mean nothing (a video of one
frame, more simulation threads than CPUs, learning compared past every run) are one line
naming the option, exit 2, before anything is loaded; an output that is a device, FIFO or
socket is refused, never replaced (as root, `--output /dev/full` put a plain file where the
device was)."""

import os
import stat

import pytest

from sacscale.atomic import atomic_write_text, write_json
from sacscale.cli import main

from cli_runs import REPO, SET

RUN = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "\n" not in err and "unexpected" not in err, err
    return code, err


@pytest.mark.parametrize("extra, says", [
    (["--seconds", "1e308"], "--seconds / --commands: 1e+308 s of video, at most 3600"),
    (["--commands", "0.5,0,0:1e308"], "--seconds / --commands: 1e+308 s of video, at most 3600"),
    (["--commands", "0.5,0,0:3000;0,0,0:3000"], "--seconds / --commands: 6000 s of video, at most 3600"),
    (["--seed", "-1"], "--seed -1: must be 0..4294967295"),
    (["--seed", str(2**40)], f"--seed {2**40}: must be 0..4294967295"),
    (["--seconds", "0.01", "--fps", "1"],
     "--seconds 0.01 at --fps 1: 1 frame, a still picture; a video has at least 2 (seconds x fps >= 1.5)"),
    (["--commands", "0.5,0,0:0.04", "--fps", "25"],
     "--commands 0.04 at --fps 25: 1 frame, a still picture; a video has at least 2 (seconds x fps >= 1.5)"),
])
def test_render_values_past_a_video_are_named(capsys, tmp_path, extra, says):
    code, err = run(capsys, "render", tmp_path / "x.pt", "--output", tmp_path / "v.webp", *extra)
    assert code == 2 and err == f"sacscale render: error: {says}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extra, says", [
    (["--num-envs", "99999999999"], "--num-envs must be at most 1048576, got 99999999999"),
    (["--num-envs", "2", "--threads", "99999999999"], "--threads: thread counts must be integers in 1..8192"),
    (["--num-envs", "2", "--steps", str(10**20)], f"--steps must be at most 1000000000, got {10**20}"),
])
def test_env_bench_sizes_past_a_batch_are_named(capsys, extra, says):
    code, err = run(capsys, "env-bench", *extra)
    assert code == 2 and says in err, err


def test_evaluate_threads_past_the_cpus_it_may_use_are_named(capsys, tmp_path):
    usable = len(os.sched_getaffinity(0))
    code, err = run(capsys, "evaluate", RUN, "--output", tmp_path / "e.json", "--threads", "100000")
    assert code == 2
    assert err == f"sacscale evaluate: error: --threads 100000: must be 1..{usable}, the CPUs this process may use"
    assert list(tmp_path.iterdir()) == []


def test_learning_compared_past_every_run_is_named(capsys, tmp_path):
    code, err = run(capsys, "compare-learning", f"a={RUN}", "--output", tmp_path / "cl.json", "--at-env-steps",
                    "5e5,1e308")
    assert code == 2
    assert err == ("sacscale compare-learning: error: --at-env-steps 1e+308: past every run (+-250000 around it; "
                   "the furthest, a, reaches 614,400 env steps)")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit):
        main(["compare-learning", f"a={RUN}", "--at-env-steps", "inf"])
    assert "'inf': give one or more positive, finite env-step counts" in capsys.readouterr().err


def _special(tmp_path, kind):
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    else:
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null's node
    return path


@pytest.mark.parametrize("kind", ["fifo", "chardev"])
def test_an_output_that_is_a_device_or_fifo_is_refused_not_replaced(tmp_path, kind):
    path = _special(tmp_path, kind)
    mode = os.lstat(path).st_mode
    for write in (lambda: write_json(path, {"a": 1}), lambda: atomic_write_text(path, "x")):
        with pytest.raises(OSError, match=r"not a plain file \(a (FIFO|character device)\)"):
            write()
    assert os.lstat(path).st_mode == mode  # still the device or FIFO
    assert sorted(p.name for p in tmp_path.iterdir()) == [kind]  # no temporary file


def test_the_cli_names_such_an_output(capsys, tmp_path):
    path = _special(tmp_path, "fifo")
    metrics = tmp_path / "m.json"
    metrics.write_text('{"run": "r1_a", "config": "a", "steady_env_steps_per_s": 1000}')
    with pytest.raises(SystemExit) as info:  # refused as a usage error, before anything is read or written
        main(["aggregate", str(metrics), "--csv", str(tmp_path / "s.csv"), "--json", str(path)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and err.endswith(
        f"sacscale aggregate: error: argument --json: {path}: not a plain file (a FIFO): an output replaces a file, "
        "never a device, FIFO or socket"), err
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert not (tmp_path / "s.csv").exists()  # both outputs checked before either is written


@pytest.mark.parametrize("extra, says", [
    (["--seconds", "1e308"], "argument --seconds: '1e308': must be 0.02..20 (one episode)"),
    (["--seconds", "10", "--settle-s", "1e308"], "argument --settle-s: '1e308': must be 0..20 (within one episode)"),
    (["--settle-s=-1e308"], "argument --settle-s: '-1e308': must be 0..20 (within one episode)"),
    (["--seconds", "0"], "argument --seconds: '0': must be 0.02..20 (one episode)"),  # refused twice in two ways
])
def test_evaluate_seconds_past_an_episode_are_named(capsys, tmp_path, extra, says):
    """1e308 s became an infinite step count: OverflowError, exit 1, no option named."""
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", str(RUN), "--output", str(tmp_path / "e.json"), *extra])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"sacscale evaluate: error: {says}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seconds, settle_s", [(1e308, 1.0), (10.0, 1e308), (10.0, -1e308), (-1e308, 1.0)])
def test_a_recorded_protocol_past_an_episode_is_a_problem_not_an_overflow(seconds, settle_s):
    from sacscale.eval.limits import seconds_problem

    assert seconds_problem(seconds, settle_s)


@pytest.mark.parametrize("extra, says", [
    (["--half-width", "0"], "--half-width must be positive"),  # refused without points as with them
    (["--half-width", "0", "--at-env-steps", "1e6"], "--half-width must be positive"),
])
def test_learning_half_width_not_positive_is_refused(capsys, tmp_path, extra, says):
    code, err = run(capsys, "compare-learning", f"a={RUN}", "--output", tmp_path / "cl.json", *extra)
    assert code == 2 and err == f"sacscale compare-learning: error: {says}"
    assert list(tmp_path.iterdir()) == []


def test_learning_half_width_past_any_run_is_refused(capsys):
    """1e308 printed a 309-digit table header, exit 0."""
    with pytest.raises(SystemExit) as stop:
        main(["compare-learning", f"a={RUN}", "--at-env-steps=1e6", "--half-width", "1e308"])
    assert stop.value.code == 2
    assert "argument --half-width: '1e308': must be 0..1e+12 (env steps)" in capsys.readouterr().err


def test_aggregate_order_naming_no_configuration_is_refused(capsys, tmp_path):
    metrics = REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json"
    code, err = run(capsys, "aggregate", metrics, "--csv", tmp_path / "a.csv", "--json", tmp_path / "a.json",
                    "--order", "n1_pool7,bin")
    assert code == 2 and err == "sacscale aggregate: error: --order 'bin': no configuration of the metrics given " \
                                "(theirs: n1_pool7)"
    assert list(tmp_path.iterdir()) == []


def test_aggregate_order_written_with_spaces_after_its_commas_is_read(capsys, tmp_path):
    """`--order "n1_pool7, n2_shared"` was refused for ' n2_shared', a name with its space."""
    import json

    metrics = sorted((REPO / "results" / SET / "metrics").glob("*.json"))
    code, err = run(capsys, "aggregate", *metrics, "--csv", tmp_path / "a.csv", "--json", tmp_path / "a.json",
                    "--order", "n2_shared, n1_pool7")
    assert code == 0, err
    assert json.loads((tmp_path / "a.json").read_text())["order"] == ["n2_shared", "n1_pool7"]


def test_render_best_refuses_an_evaluation_given_twice(capsys, tmp_path):
    evaluation = REPO / "results" / SET / "eval" / "shared_r1_n1_pool7.json"
    again = tmp_path / "again.json"
    again.symlink_to(evaluation)
    code, err = run(capsys, "render-best", "--evaluations", evaluation, again, "--runs-dir", RUN.parent,
                    "--output", tmp_path / "b.webp", "--record", tmp_path / "b.json")
    assert code == 2 and err == f"sacscale render-best: error: evaluation {again}: given twice (also {evaluation})"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.json"]
