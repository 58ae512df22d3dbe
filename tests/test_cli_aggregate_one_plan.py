"""`aggregate` summarises the runs of one plan: metrics whose run names carry two plans'
prefixes (two sets, two presets: a CPU set's one-rank run against a GPU set's two-rank
run gave a "1038x speed-up") are refused in one line, nothing written. The metrics
records name no set, so two sets of one preset (one prefix) are not told apart here."""

import json

from cli_runs import REPO, SET, sacscale
from cli_runs import one_line as _one_line

GPU = REPO / "results" / SET / "metrics" / "shared_r1_n2_shared.json"
OTHER = REPO / "results" / "h200x1" / "metrics" / "h200_r1_n1_pool7.json"


def test_metrics_of_two_plans_are_refused(tmp_path):
    done = sacscale("aggregate", OTHER, GPU, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    "--order", "n1_pool7,n2_shared", "--pair", "n1_pool7:n2_shared")
    _one_line(done, f"sacscale aggregate: error: metrics file {GPU}: run 'shared_r1_n2_shared' is of another plan "
                    f"than 'h200_r1_n1_pool7' ({OTHER}): run-name prefixes 'shared' and 'h200'; a summary compares "
                    "the runs of one set: give one set's metrics")
    assert not list(tmp_path.iterdir())


def test_the_runs_of_one_set_are_summarised(tmp_path):
    metrics = sorted((REPO / "results" / SET / "metrics").glob("*.json"))
    done = sacscale("aggregate", *metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.json").is_file()


def _renamed(tmp_path, source, run, config):
    """A copy of a committed metrics record under another run and configuration name."""
    record = json.loads(source.read_text()) | {"run": run, "config": config}
    path = tmp_path / "in" / f"{run}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def test_a_configuration_name_holding_a_repeat_like_part_is_of_its_runs_plan(tmp_path):
    # the schema allows `n1_r2_x`; its run `shared_r1_n1_r2_x` is of prefix 'shared', not 'shared_r1_n1'
    one = _renamed(tmp_path, REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json", "shared_r1_n1_r2_x",
                   "n1_r2_x")
    done = sacscale("aggregate", one, GPU, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    "--order", "n1_r2_x,n2_shared", "--pair", "n1_r2_x:n2_shared")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "s.json").read_text())["configs"].keys() == {"n1_r2_x", "n2_shared"}


def test_two_plans_are_told_apart_when_a_prefix_holds_a_repeat_like_part(tmp_path):
    one = _renamed(tmp_path, REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json", "cpu_r1_b_r1_n1", "n1")
    two = _renamed(tmp_path, GPU, "cpu_r1_n2", "n2")
    done = sacscale("aggregate", one, two, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    _one_line(done, f"sacscale aggregate: error: metrics file {two}: run 'cpu_r1_n2' is of another plan than "
                    f"'cpu_r1_b_r1_n1' ({one}): run-name prefixes 'cpu' and 'cpu_r1_b'; a summary compares the runs "
                    "of one set: give one set's metrics")


def test_a_hand_run_folder_named_without_its_configuration_is_told_how_to_name_it(tmp_path):
    """analyze-run's output of a folder `n1` (config null) was called "not analyze-run's output"."""
    hand = _renamed(tmp_path, GPU, "n1", None)
    done = sacscale("aggregate", hand, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    _one_line(done, f"sacscale aggregate: error: metrics file {hand}: run 'n1' has no run configuration (config "
                    "null): analyze-run reads it from the run folder's name, PREFIX_rK_CONFIG (e.g. hand_r1_n1), or "
                    "from the run's run.json; aggregate groups runs by it: name the folders so and analyze them again")
