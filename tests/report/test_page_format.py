"""The page the report stage writes for given evidence is pinned to PAGE_FORMAT: verify
compares a set's page with the one this code composes only where the set records this
code's format, so a change to what the page says must raise it. The pins are the pages
of committed sets (composed without figures, logs or video), which cover the sections
most sets have; a change this does not see is still a change to the format."""

import hashlib

import pytest

from sacscale.report.build import build, read_inputs
from sacscale.report.document import to_markdown
from sacscale.report.document import to_html
from sacscale.report.page_format import PAGE_FORMAT, PAGE_FORMATS_WRITTEN
from sacscale.report.shown import shown_view
from sacscale.report.set_inputs import set_inputs
from cli_runs import REPO

# {page format: {set: sha256 of its page's Markdown}}, for every format this code writes
PINNED = {
    1: {
        "h200x1_shared_short": "d84c252f8a9f4ca9cb28b5f52ce04cf702e99aaca84702ae1a8497cd69f19162",
        "h200x1_shared_learning_2x": "2478329d3086190b938025d8ab06eb9e0d016c825659826d66548924948d2734",
    },
    2: {
        "h200x1_shared_short": "3ede2561949766140664c2b09bf50392bef59619f946f398a43da552b0be0f7c",
        "h200x1_shared_learning_2x": "6a50f5a5deef5d311ebbbc70d25d0c117b1ea6ee535fc2f68168ef5b3f5c20f6",
    },
    3: {  # the pinned sets probed as many ranks as their runs train: their pages as format 2's
        "h200x1_shared_short": "3ede2561949766140664c2b09bf50392bef59619f946f398a43da552b0be0f7c",
        "h200x1_shared_learning_2x": "6a50f5a5deef5d311ebbbc70d25d0c117b1ea6ee535fc2f68168ef5b3f5c20f6",
    },
}


def document(name: str, page_format: int = PAGE_FORMAT):
    results, reports = REPO / "results" / name, REPO / "reports" / name
    paths = dict(set_inputs(results, reports), attempts=[], video=None, video_record=None)
    summary, metrics, others = read_inputs(paths.pop("summary_path"), paths.pop("metrics_paths"), reports, **paths)
    return build(summary, metrics, reports / "figures", reports, draw=False, page_format=page_format, **others)


def page(name: str, page_format: int = PAGE_FORMAT) -> str:
    return to_markdown(document(name, page_format))


def test_every_format_this_code_writes_is_pinned():
    assert sorted(PINNED) == list(PAGE_FORMATS_WRITTEN) and PAGE_FORMAT == max(PAGE_FORMATS_WRITTEN)


@pytest.mark.parametrize("page_format, name", [(f, n) for f in sorted(PINNED) for n in sorted(PINNED[f])])
def test_the_page_of_a_committed_set_is_the_one_its_page_format_pins(page_format, name):
    digest = hashlib.sha256(page(name, page_format).encode()).hexdigest()
    assert digest == PINNED[page_format][name], (
        f"the page of {name} changed ({digest}): what the report says for the same evidence is a new page format: "
        "raise PAGE_FORMAT in src/sacscale/report/page_format.py and pin the new pages here")


def test_the_metric_definitions_are_shown_as_written():
    """Format 1 wrote them as raw Markdown: `'Reward/<term>'` reached the HTML as a tag."""
    name = "h200x1_shared_short"
    shown = shown_view(to_html(document(name), REPO / "reports" / name, embed_images=False), html=True).lines
    assert any("'Reward/<term>' over its maximum" in line for line in shown), shown
