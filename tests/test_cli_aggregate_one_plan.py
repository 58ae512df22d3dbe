"""`aggregate` summarises the runs of one plan: metrics whose run names carry two plans'
prefixes (two sets, two presets: a CPU set's one-rank run against a GPU set's two-rank
run gave a "1038x speed-up") are refused in one line, nothing written. The metrics
records name no set, so two sets of one preset (one prefix) are not told apart here."""

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
