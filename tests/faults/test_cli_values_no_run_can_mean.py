"""Command-line values (docs/faults.md row 26): a
value no run can mean (NaN, a count below one) or an input given twice is one line naming
the option or file, exit 2, before anything is started or written. Before: NaN reached
int() (exit 1, 'unexpected'; from the probe's ranks a traceback), a negative iteration
count ran and printed a benchmark of nothing, a run given twice to `aggregate` counted
twice (n=2 from one run) and one label given twice to `compare-learning` dropped a run."""

import json

import pytest

from sacscale.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "\n" not in err and "unexpected" not in err, err
    return code, err


@pytest.mark.parametrize("argv, says", [
    (["probe", "correctness", "--devices", "cpu", "--timeout-s", "nan"], "--timeout-s nan: must be 1..86400 seconds"),
    (["learner-bench", "--device", "cpu", "--iters", "-1"], "--iters -1: must be 1..1000000"),
    (["learner-bench", "--device", "cpu", "--num-envs", "0"], "--num-envs 0: must be 1..1048576"),
    (["learner-bench", "--device", "cpu", "--extra", '{"actor_obs_dim": 2}'],
     "--extra actor_obs_dim: the task's own size, which its model fixes; the benchmark times the task's learner"),
    (["compare-learning", "--tail-fraction", "nan", "a=R"], "--tail-fraction nan: must be in (0, 1]"),
    (["compare-learning", "a=R1", "a=R2"], "label 'a' is given twice"),
])
def test_values_no_run_can_mean_are_named(capsys, tmp_path, argv, says):
    if argv[0] == "probe":
        argv = [*argv, "--output", tmp_path / "p.json"]
    code, err = run(capsys, *argv)
    assert code == 2 and err.endswith(f"error: {says}"), err
    assert list(tmp_path.iterdir()) == []


def metrics_file(path, name="r1_n1_x"):
    path.write_text(json.dumps({"run": name, "config": "n1_x", "repeat": 1, "steady_env_steps_per_s": 1000.0}))
    return path


def test_a_run_given_twice_to_aggregate_is_refused(capsys, tmp_path):
    first = metrics_file(tmp_path / "a.json")
    second = metrics_file(tmp_path / "b.json")  # the same run under another file name
    code, err = run(capsys, "aggregate", first, second, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    assert code == 2 and err == f"sacscale aggregate: error: metrics file {second}: run 'r1_n1_x' is given twice " \
                                f"(also {first})"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_one_file_for_both_outputs_of_aggregate_is_refused(capsys, tmp_path):
    code, err = run(capsys, "aggregate", metrics_file(tmp_path / "a.json"), "--csv", tmp_path / "s",
                    "--json", f"{tmp_path}/./s")
    assert code == 2 and "--csv and --json are one file" in err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("rate", ["17000", -5, True])
def test_a_rate_that_is_no_number_of_env_steps_is_refused(capsys, tmp_path, rate):
    """A rate written as a string of digits or a negative one was summarised as given."""
    data = json.loads(metrics_file(tmp_path / "a.json").read_text())
    data["steady_env_steps_per_s"] = rate
    (tmp_path / "a.json").write_text(json.dumps(data))
    outputs = ["--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json"]
    code, err = run(capsys, "aggregate", tmp_path / "a.json", *outputs)
    assert code == 2 and f"steady_env_steps_per_s {str(rate)!r} is not a rate" in err, err
    assert not (tmp_path / "s.csv").exists()
