"""Walk-arounds of verify (docs/faults.md row 26): a look-alike digit in a
table cell, markup of the page that colours a cell away, an image from elsewhere or a
figure the page shows removed, and train_meta.json / run.json fields that contradict the
run's events or each other. Each on a copy of a committed set with figure files."""

import json
from pathlib import Path

import pytest

from sacscale.evidence import manifest
from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, edit_text, report_file

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"  # a current-format set whose page shows figure files
CELL = ">17,538 ± 636<"  # the seed table's 1-GPU mean as report.html shows it
RUN = "shared_r1_n1_pool7"


@pytest.fixture
def work(tmp_path):
    return copy_committed_set(tmp_path, SET)


report = report_file
edit = edit_text


def problems_naming(result, what):
    return [p for p in result.problems() if what in p]


def test_the_untouched_copy_verifies(work):
    assert verify(work).ok


@pytest.mark.parametrize("page, old, new", [
    ("report.html", CELL, ">\uff117,538 ± 636<"),  # a fullwidth 1: float() reads it as 1
    ("report.md", "| 17,538 ± 636 |", "| \u06617,538 ± 636 |"),  # an Arabic-Indic 1
])
def test_a_look_alike_digit_in_a_cell_fails(work, page, old, new):
    edit(report(work, page), old, new)
    result = verify(work)
    assert not result.ok
    assert problems_naming(result, f"{page}: "), result.problems()


@pytest.mark.parametrize("old, new, says", [
    (CELL, '><font color="white">17,538 ± 636</font> 99,999<', "a <font> element"),
    ("<td ", '<td bgcolor="black" ', "an attribute 'bgcolor' on <td>"),
    ('src="figures/', 'src="https://elsewhere.example/', "an image from elsewhere"),
])
def test_markup_that_colours_or_replaces_what_is_shown_fails(work, old, new, says):
    edit(report(work, "report.html"), old, new)
    problems = problems_naming(verify(work), says)
    assert problems and all("does not match the evidence" in p for p in problems), problems


def test_a_figure_the_page_shows_removed_fails(work):
    (report(work, "figures") / "scaling_bars.png").unlink()
    problems = problems_naming(verify(work), "shows the figure 'figures/scaling_bars.png', which is not in its folder")
    assert problems, problems


@pytest.mark.parametrize("file, key, value, says", [
    ("train_meta.json", "rank0_env_steps", 1, "env steps: train_meta.json says rank 0 took 1"),
    ("run.json", "timeout_s", 1, "timeout: plan.json says 3600.0 s, run.json 1 s"),
    ("run.json", "started_at", "2020-01-01T00:00:00+00:00", "run.json started_at '2020-01-01T00:00:00+00:00' is not"),
])
def test_a_field_that_contradicts_the_events_or_its_twin_fails(work, file, key, value, says):
    """The field edited and the manifest written again, as an attacker would."""
    path = work / "runs" / RUN / file
    record = json.loads(path.read_text())
    assert key in record
    record[key] = value
    path.write_text(json.dumps(record))
    manifest.write(work)
    result = verify(work)
    assert not result.ok
    assert problems_naming(result, f"record: {RUN}: {says}"), result.problems()
