"""`sacscale render-best` refuses outputs that are one file, before anything renders: the
record written after the video replaced it, and the command still said it wrote the video.
An output on one of the evaluations it reads is refused too."""

import json

import pytest

from cli_runs import one_line, sacscale
from test_render_best import evaluation


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "r.json").write_text(json.dumps(evaluation(0.5, 0.5, 0.0)))
    return tmp_path


def _render_best(d, output, record):
    return sacscale("render-best", "--evaluations", d / "r.json", "--runs-dir", d / "runs", "--output", output,
                    "--record", record, "--width", "64", "--height", "48", "--seconds", "0.2")


def test_one_file_for_the_video_and_the_record_is_refused(inputs):
    done = _render_best(inputs, inputs / "same.webp", inputs / "." / "same.webp")
    one_line(done, f"--output and --record are one file ({inputs / 'same.webp'})")
    assert not (inputs / "same.webp").exists()


def test_a_link_to_the_video_as_the_record_is_refused(inputs):
    (inputs / "link.json").symlink_to(inputs / "v.webp")
    one_line(_render_best(inputs, inputs / "v.webp", inputs / "link.json"), "--output and --record are one file")
    assert not (inputs / "v.webp").exists()


@pytest.mark.parametrize("option", ["--output", "--record"])
def test_an_output_on_an_evaluation_is_refused(inputs, option):
    before = (inputs / "r.json").read_text()
    output, record = (inputs / "r.json", inputs / "v.json") if option == "--output" else (inputs / "v.webp",
                                                                                           inputs / "r.json")
    done = _render_best(inputs, output, record)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert (inputs / "r.json").read_text() == before
    if option == "--record":
        assert f"--record {inputs / 'r.json'}: is the evaluation" in done.stderr
