"""The report's video: which run is the best (sacscale.eval.best), `sacscale render-best`
rendering that run and recording why, and the report showing it with its reasons."""

import hashlib
import json

import pytest

from sacscale.cli import main
from sacscale.eval.best import best_run, score

from test_render import make_checkpoint


def evaluation(lin, yaw, falls, env_steps=100):
    return {"overall": {"normalised_tracking": {"lin_vel_xy": lin, "yaw_rate": yaw}, "fall_rate": falls},
            "env_steps": env_steps}


def test_the_score_weighs_tracking_by_staying_up():
    assert score(evaluation(0.8, 0.6, 0.0)) == pytest.approx(0.7)
    assert score(evaluation(0.8, 0.6, 0.5)) == pytest.approx(0.35)
    # tracks well but always falls: worse than a modest policy that stays up
    evals = {"falls": evaluation(0.9, 0.9, 1.0), "modest": evaluation(0.4, 0.3, 0.0),
             "worse": evaluation(0.3, 0.3, 0.0)}
    choice = best_run(evals)
    assert choice["run"] == "modest" and choice["fall_rate"] == 0.0
    assert choice["scores"] == {"falls": 0.0, "modest": pytest.approx(0.35), "worse": pytest.approx(0.3)}
    assert best_run({"a": evaluation(0.5, 0.5, 0.0), "b": evaluation(0.5, 0.5, 0.0)})["run"] == "a"  # ties: first
    # no counted sample (every robot fell before the settling time): no tracking
    no_samples = {"overall": {"normalised_tracking": {"lin_vel_xy": None, "yaw_rate": None}, "fall_rate": 1.0}}
    assert score(no_samples) == 0.0 and best_run({"x": no_samples})["tracking_lin"] is None
    with pytest.raises(ValueError, match="no evaluations"):
        best_run({})
    with pytest.raises(ValueError, match="score is nan"):
        score(evaluation(float("nan"), 0.5, 0.0))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, gl, gl_environment):
    d = tmp_path_factory.mktemp("best")
    for run in ("p_r1_n1", "p_r2_n1"):
        make_checkpoint(d / "runs" / run / "checkpoints" / "final.pt", iteration=7)
    evals = []
    for run, e in (("p_r1_n1", evaluation(0.2, 0.1, 0.0)), ("p_r2_n1", evaluation(0.6, 0.5, 0.1))):
        (d / "eval").mkdir(exist_ok=True)
        (d / "eval" / f"{run}.json").write_text(json.dumps(e))
        evals.append(str(d / "eval" / f"{run}.json"))
    video, record = d / "report" / "figures" / "best_run.webp", d / "report" / "figures" / "best_run.json"
    argv = ["render-best", "--evaluations", *evals, "--runs-dir", str(d / "runs"), "--output", str(video),
            "--record", str(record), "--max-bytes", "500000", "--seconds", "0.2", "--width", "64", "--height", "48",
            "--fps", "10"]
    with gl_environment(gl):
        assert main(argv) == 0
    return d, video, json.loads(record.read_text())


def test_render_best_renders_the_best_run_and_records_why(rendered):
    _, video, record = rendered
    data = video.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) <= 500_000
    assert record["run"] == "p_r2_n1" and record["score"] == pytest.approx(0.55 * 0.9)
    assert record["video"] == "best_run.webp" and record["fps"] == 10 and "falls" in record["rule"]
    # the policy it rendered, which verify holds against the run's evaluation
    final = rendered[0] / "runs" / "p_r2_n1" / "checkpoints" / "final.pt"
    assert record["checkpoint_sha256"] == hashlib.sha256(final.read_bytes()).hexdigest()


def test_the_report_shows_the_video_and_says_why_that_run(rendered, tmp_path):
    from sacscale.report.build import video_section
    from sacscale.report.document import Document, to_html, to_markdown

    d, video, record = rendered
    doc = Document(title="t").add(*video_section(video, record, d / "report"))
    md = to_markdown(doc)
    assert "figures/best_run.webp" in md and "`p_r2_n1`" in md and "score 0.495" in md and "0.10 falls" in md
    html = to_html(doc, d / "report")
    assert "data:image/webp;base64," in html  # embedded (as asked), with the right type
    assert 'src="figures/best_run.webp"' in to_html(doc, d / "report", embed_images=False)  # the report links it


def test_a_webp_video_is_embedded_with_its_type(tmp_path):
    """The pipeline's video is an animated WebP: an HTML that embeds it names image/webp
    (without OpenGL too: the report's side only)."""
    from PIL import Image as PILImage

    from sacscale.report.document import Document, Image, to_html

    (tmp_path / "figures").mkdir()
    PILImage.new("RGB", (2, 2)).save(tmp_path / "figures" / "best_run.webp")
    doc = Document(title="t").add(Image("figures/best_run.webp", "video"))
    assert "data:image/webp;base64," in to_html(doc, tmp_path)
    assert 'src="figures/best_run.webp"' in to_html(doc, tmp_path, embed_images=False)


def _apart(tmp_path, content):
    """An evaluation in eval/, the runs in runs/ and the outputs' folder out/, apart as the
    pipeline keeps them (an output among the files read is refused)."""
    for folder in ("eval", "runs", "out"):
        (tmp_path / folder).mkdir()
    (tmp_path / "eval" / "r.json").write_text(json.dumps(content))
    return tmp_path / "eval" / "r.json", tmp_path / "out"


def test_a_bad_evaluation_is_named_before_anything_renders(tmp_path, capsys):
    evaluated, out = _apart(tmp_path, {"overall": {}})
    code = main(["render-best", "--evaluations", str(evaluated), "--runs-dir", str(tmp_path / "runs"),
                 "--output", str(out / "v.gif"), "--record", str(out / "v.json")])
    err = capsys.readouterr().err
    assert code == 2 and "not `sacscale evaluate`'s output" in err and "'overall.fall_rate' is missing" in err, err
    assert not (out / "v.gif").exists()


def test_runs_dir_that_is_not_a_folder_is_named_before_anything_renders(tmp_path, capsys):
    evaluated, out = _apart(tmp_path, evaluation(0.5, 0.5, 0.0))
    (tmp_path / "runs").rmdir()
    (tmp_path / "runs").write_text("")
    code = main(["render-best", "--evaluations", str(evaluated), "--runs-dir", str(tmp_path / "runs"),
                 "--output", str(out / "v.gif"), "--record", str(out / "v.json")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"sacscale render-best: error: --runs-dir {tmp_path / 'runs'}: not a folder"), err


def test_the_render_it_runs_speaks_in_render_best_s_name(tmp_path, capsys):
    evaluated, out = _apart(tmp_path, evaluation(0.5, 0.5, 0.0))
    code = main(["render-best", "--evaluations", str(evaluated), "--runs-dir", str(tmp_path / "runs"),
                 "--output", str(out / "v.gif"), "--record", str(out / "v.json"), "--fps", "500"])
    err = capsys.readouterr().err
    # --fps is refused, or, where no GL backend loads, the backend is: either way in this command's name
    assert code == 2 and err.startswith("sacscale render-best: error: ") and err.count("\n") == 1, err
    assert "--fps 500" in err or "OpenGL" in err or "MUJOCO_GL" in err, err
    assert not (out / "v.json").exists()
