"""The page the report stage writes for given evidence is pinned to PAGE_FORMAT: verify
compares a set's page with the one this code composes only where the set records this
code's format, so a change to what the page says must raise it. The pins are the pages
of committed sets (composed without figures, logs or video), which cover the sections
most sets have; a change this does not see is still a change to the format."""

import hashlib

import pytest

from sacscale.report.build import build, read_inputs
from sacscale.report.document import to_markdown
from sacscale.report.page_format import PAGE_FORMAT
from sacscale.report.set_inputs import set_inputs
from cli_runs import REPO

# {set: sha256 of its page's Markdown} for PAGE_FORMAT
PINNED = {
    1: {
        "h200x1_shared_short": "d84c252f8a9f4ca9cb28b5f52ce04cf702e99aaca84702ae1a8497cd69f19162",
        "h200x1_shared_learning_2x": "2478329d3086190b938025d8ab06eb9e0d016c825659826d66548924948d2734",
    },
}


def page(name: str) -> str:
    results, reports = REPO / "results" / name, REPO / "reports" / name
    paths = dict(set_inputs(results, reports), attempts=[], video=None, video_record=None)
    summary, metrics, others = read_inputs(paths.pop("summary_path"), paths.pop("metrics_paths"), reports, **paths)
    return to_markdown(build(summary, metrics, reports / "figures", reports, draw=False, **others))


@pytest.mark.parametrize("name", sorted(PINNED[PAGE_FORMAT]))
def test_the_page_of_a_committed_set_is_the_one_its_page_format_pins(name):
    digest = hashlib.sha256(page(name).encode()).hexdigest()
    assert digest == PINNED[PAGE_FORMAT][name], (
        f"the page of {name} changed ({digest}): what the report says for the same evidence is a new page format: "
        "raise PAGE_FORMAT in src/sacscale/report/page_format.py and pin the new pages here")
