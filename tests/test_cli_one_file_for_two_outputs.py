"""One file given for two outputs of a command. Before: `verify-env --output X --diff-output
X` exited 0 with the patch replaced by the record (which then said to `git apply --binary
X`, the record itself), and `compare-learning --output X --figure X` left only the PNG;
evaluate, report and prepare-model had the same gap. Now each refuses in one line naming
both options and the file, exit 2, before anything is written (as aggregate, manifest and
render-best did)."""

import pytest

from cli_runs import REPO, SET, one_line, sacscale

RESULTS = REPO / "results" / SET
RUN = RESULTS / "runs" / "shared_r1_n1_pool7"
METRICS = sorted((RESULTS / "metrics").glob("*.json"))


@pytest.mark.parametrize("argv, first, second, name", [
    (["verify-env", "--output", "{d}/x", "--diff-output", "{d}/x"], "--output", "--diff-output", "x"),
    (["compare-learning", f"a={RUN}", "--output", "{d}/x.png", "--figure", "{d}/x.png"], "--output", "--figure",
     "x.png"),
    (["evaluate", RUN, "--output", "{d}/x.png", "--figure", "{d}/x.png"], "--output", "--figure", "x.png"),
    (["report", "--summary", RESULTS / "summary.json", "--metrics", *METRICS, "--output-md", "{d}/r",
      "--output-html", "{d}/r", "--figures-dir", "{d}/figures"], "--output-md", "--output-html", "r"),
    (["prepare-model", "--output-dir", "{d}", "--json", "{d}/g1_walk_flat.mjb"], "--output-dir's g1_walk_flat.mjb",
     "--json", "g1_walk_flat.mjb"),
    (["aggregate", *METRICS, "--csv", "{d}/x", "--json", "{d}/x"], "--csv", "--json", "x"),
])
def test_one_file_for_two_outputs_is_refused(tmp_path, argv, first, second, name):
    out = tmp_path / "out"
    out.mkdir()
    done = sacscale(*[str(a).replace("{d}", str(out)) for a in argv])
    one_line(done, f"error: {first} and {second} are one file ({out / name}): the second would replace the first")
    assert list(out.iterdir()) == []


def test_one_file_by_two_names_is_refused(tmp_path):
    """A link to the other output, or `..` on the way, names the same file."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.png").symlink_to(tmp_path / "x.png")
    done = sacscale("compare-learning", f"a={RUN}", "--output", tmp_path / "sub" / ".." / "x.png",
                    "--figure", tmp_path / "link.png")
    one_line(done, "error: --output and --figure are one file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.png", "sub"]
