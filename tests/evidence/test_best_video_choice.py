"""verify makes the report's video choice again from the set's evaluations: best_run.json
(written after the manifest, and the source of the video's caption) edited to name another
run or other figures passed."""

import json

import pytest
from set_copies import copy_committed_set, report_file

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"


def _edit_choice(root, edit):
    path = report_file(root, "figures/best_run.json")
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(run="shared_r2_n2_shared"), "best_run.json: run shared_r2_n2_shared, the set's evaluations "
                                                     "give shared_r"),
    (lambda r: r.update(score=0.99), "best_run.json: score 0.99, the set's evaluations give 0."),
    (lambda r: r.update(fall_rate=0.0), "best_run.json: fall_rate 0.0, the set's evaluations give"),
    (lambda r: r["scores"].update({next(iter(r["scores"])): 1.0}), "best_run.json: scores {"),
])
def test_an_edited_choice_is_named(tmp_path, edit, says):
    root = copy_committed_set(tmp_path, SET)
    before = json.loads(report_file(root, "figures/best_run.json").read_text())
    _edit_choice(root, edit)
    assert json.loads(report_file(root, "figures/best_run.json").read_text()) != before
    result = verify(root)
    assert any(says in p for p in result.derived), result.derived


def test_the_committed_choices_are_the_ones_their_evaluations_give(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    result = verify(root)
    assert result.ok and not [p for p in result.derived if "best_run.json" in p]


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(seconds=60.0, fps=30.0), "best_run.json: says 60 s at 30 fps, its video best_run.webp has 120 "
                                                 "frames"),
    (lambda r: r.update(width=1920, height=1080), "says 1920x1080, its video best_run.webp is 320x240"),
    (lambda r: r.update(video="../../../etc/passwd"), "is not the video the stage writes"),
    (lambda r: r.update(commands="3.0,0,0:4;0,0,2.0:4;0,0,0:4"),
     "best_run.json: says commands '3.0,0,0:4;0,0,2.0:4;0,0,0:4', the pipeline's render rule renders render-best's "
     "default '0.5,0,0:4;0,0,0.6:4;0,0,0:4': does not match the evidence"),
])
def test_a_caption_that_is_not_its_video_is_named(tmp_path, edit, says):
    root = copy_committed_set(tmp_path, SET)
    _edit_choice(root, edit)
    result = verify(root)
    assert any(says in p for p in result.derived), result.derived
