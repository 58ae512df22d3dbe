"""`sacscale render` (and render-best, which renders through it), `report --run-dirs` and
`manifest` of a run folder a trainer is training in (its trainer lock, `.<name>.trainer-lock`
beside it, held: a resume). Before: render drew the last sitting's `checkpoints/final.pt`
as the run's policy, exit 0, where evaluate refused the same folder; the report drew its
curves so far and the manifest hashed its files as they changed. Now each refuses it in one
line naming the holder, as analyze-run, evaluate and compare-learning do."""

import json

from synthetic_runs import linear_points, write_run
from test_run_readers_while_training import live_line, sacscale, while_trained


def test_render_of_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    run = write_run(tmp_path / "rs", linear_points(8, 100.0, 1.0))
    (run / "checkpoints").mkdir()
    out = tmp_path / "walk.gif"
    for given in (run, run / "checkpoints" / "final.pt"):
        done, pid = while_trained(run, "render", given, "--output", out, "--seconds", "0.2")
        assert done.returncode == 2
        assert done.stderr.splitlines() == [live_line("render", run, run, pid, "its checkpoint", "render")]
        assert not out.exists()
    done = sacscale("render", run, "--output", out, "--seconds", "0.2")
    assert "training in this run folder" not in done.stderr  # its trainer gone: on to the rest of the checks
    assert done.returncode != 0  # (no final.pt there to render)


def test_render_best_of_a_best_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    runs = tmp_path / "runs"
    evaluations = []
    for name, lin in (("p_r1_n1", 0.2), ("p_r2_n1", 0.6)):
        write_run(runs / name, linear_points(8, 100.0, 1.0))
        evaluations.append(tmp_path / "eval" / f"{name}.json")
        evaluations[-1].parent.mkdir(exist_ok=True)
        tracking = {"lin_vel_xy": lin, "yaw_rate": lin}
        evaluations[-1].write_text(json.dumps({"overall": {"normalised_tracking": tracking, "fall_rate": 0.0},
                                               "env_steps": 100}))
    video, record = tmp_path / "best.webp", tmp_path / "best.json"
    best = runs / "p_r2_n1"
    done, pid = while_trained(best, "render-best", "--evaluations", *evaluations, "--runs-dir", runs,
                              "--output", video, "--record", record, "--seconds", "0.2")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [live_line("render-best", best, best, pid, "its checkpoint", "render")]
    assert not video.exists() and not record.exists()


def test_report_of_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    run = write_run(tmp_path / "runs" / "rs", linear_points(8, 100.0, 1.0))
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "rs.json").write_text("{}")
    report = tmp_path / "rep"
    done, pid = while_trained(run, "report", "--summary", tmp_path / "summary.json", "--metrics",
                              tmp_path / "rs.json", "--output-md", report / "report.md", "--output-html",
                              report / "report.html", "--figures-dir", report / "figures", "--run-dirs", run)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        live_line("report", run, run, pid, "its learning curves", "report on").replace(" error:", "", 1)]
    assert not report.exists()


def test_manifest_of_a_set_with_a_run_being_trained_is_refused_naming_its_trainer(tmp_path):
    root = tmp_path / "S"
    run = write_run(root / "runs" / "rs", linear_points(8, 100.0, 1.0))
    done, pid = while_trained(run, "manifest", root)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [live_line("manifest", run, run, pid, "the hashes of its files", "list")]
    assert not (root / "MANIFEST.sha256").exists()
    done = sacscale("manifest", root)
    assert done.returncode == 0, done.stderr
    assert (root / "MANIFEST.sha256").exists()
