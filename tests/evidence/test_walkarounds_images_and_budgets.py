"""Walk-arounds of verify (docs/faults.md row 28), each on a copy of a
committed set: images a browser loads from elsewhere though verify read them as a file of
the report's folder (`HTTPS://host/x.png`, ` //host/x.png`, `%2e%2e/x.png`, with a folder of
that name planted), a figure the report stage never draws (an SVG, an extra PNG), an
embedded image that is none of the set's figures, a link target that runs script behind a
control character, and report files too large to read (a sparse file of gigabytes)."""

import base64
import io
import os
import re
import shutil
import time

import pytest
from PIL import Image

from sacscale.evidence.verify import verify
from sacscale.reading import RECORD_LIMIT
from set_copies import copy_committed_set, edit_text, report_file

SET = "h200x1_shared_short"  # its report.html shows figure files
EMBEDDING_SET = "h200x1"  # its report.html embeds its figures as data URIs
IMG = '<img alt="scaling bars" src="figures/scaling_bars.png">'
MD_IMG = "![scaling bars](figures/scaling_bars.png)"
RATIO_HTML = '<td style="text-align: right;">1.719x</td>'


def tiny_png() -> str:
    """A 1x1 PNG, base64: an image, but none of the set's figures."""
    out = io.BytesIO()
    Image.new("RGB", (1, 1)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def failing(root, says):
    result = verify(root)
    assert not result.ok
    assert [p for p in result.problems() if says in p], result.problems()


@pytest.fixture
def work(tmp_path):
    return copy_committed_set(tmp_path, SET)


@pytest.mark.parametrize("src, planted", [
    ("HTTPS://evil.example/x.png", "HTTPS:/evil.example"),  # the scheme is read case-blind
    (" //evil.example/x.png", " /evil.example"),  # blanks stripped: a protocol-relative URL
    ("%2e%2e/x.png", "%2e%2e"),  # decoded by the browser: the folder above the report's
])
def test_an_image_a_browser_loads_from_elsewhere_fails(work, src, planted):
    folder = report_file(work, planted)
    folder.mkdir(parents=True)
    shutil.copy(report_file(work, "figures/scaling_bars.png"), folder / "x.png")
    edit_text(report_file(work, "report.html"), IMG, f'<img alt="scaling bars" src="{src}">')
    failing(work, "not a figure of the report stage")


@pytest.mark.parametrize("name", ["fake.svg", "extra.png", "scaling_bars.PNG"])
def test_a_figure_the_report_stage_does_not_draw_fails(work, name):
    shutil.copy(report_file(work, "figures/scaling_bars.png"), report_file(work, f"figures/{name}"))
    edit_text(report_file(work, "report.html"), IMG, f'<img alt="scaling bars" src="figures/{name}">')
    edit_text(report_file(work, "report.md"), MD_IMG, f"![scaling bars](figures/{name})")
    result = verify(work)
    assert not result.ok
    pages = {p.split(":")[1].strip().rsplit("/", 1)[-1] for p in result.problems()
             if "not a figure of the report stage" in p}
    assert pages == {"report.html", "report.md"}, result.problems()


def test_an_embedded_image_that_is_none_of_the_figures_fails(tmp_path):
    root = copy_committed_set(tmp_path, EMBEDDING_SET)
    page = report_file(root, "report.html")
    text = page.read_text()
    start = text.index('src="data:image/png;base64,') + len('src="')
    end = text.index('"', start)
    page.write_text(text[:start] + f"data:image/png;base64,{tiny_png()}" + text[end:])
    failing(root, "1 embedded image(s) that are none of the figures in its folder")


def test_the_committed_embedding_set_verifies(tmp_path):
    assert verify(copy_committed_set(tmp_path, EMBEDDING_SET)).ok


@pytest.mark.parametrize("target", ["\x01javascript:alert(1)", "\x00java\tscript:alert(1)", "\x1fJAVASCRIPT:x"])
def test_a_link_that_runs_script_behind_a_control_character_fails(work, target):
    edit_text(report_file(work, "report.html"), RATIO_HTML,
              f'<td style="text-align: right;"><a href="{target}">1.719x</a></td>')
    failing(work, "a href that runs or shows another page")


@pytest.mark.parametrize("name", ["report.md", "report.html", "numbers.json"])
def test_a_report_file_of_gigabytes_is_named_not_read(work, name):
    with open(report_file(work, name), "r+b") as fh:
        fh.truncate(6 << 30)  # sparse: no disk used; reading it whole took the machine's memory
    failing(work, f"reports/{SET}/{name}: larger than")


@pytest.mark.parametrize("name", ["plan.json", "summary.json", "evidence.json"])
def test_a_set_json_past_the_record_limit_is_named_not_read(work, name):
    if not (work / name).is_file():
        pytest.skip(f"{name} not in this set")
    with open(work / name, "r+b") as fh:
        # one byte past the record limit is refused as a file of gigabytes is, and the
        # files verify hashes (a set without a budget) then hash in well under a second
        fh.truncate(RECORD_LIMIT + 1)
    failing(work, f"{name}: larger than")


def test_a_manifest_of_gigabytes_is_named(work):
    with open(work / "MANIFEST.sha256", "r+b") as fh:
        fh.truncate(6 << 30)
    with pytest.raises(ValueError, match="MANIFEST.sha256: not a manifest file \\(larger than 64 MB"):
        verify(work)


def test_the_untouched_copy_verifies(work):
    assert verify(work).ok
    assert not [p for p in os.listdir(report_file(work, "figures")) if p.startswith(".")]


@pytest.mark.parametrize("charset", ["iso-2022-jp", "windows-1252", "utf-7"])
def test_a_page_declared_in_another_encoding_fails(work, charset):
    edit_text(report_file(work, "report.html"), '<meta charset="utf-8">', f'<meta charset="{charset}">')
    failing(work, f"a charset '{charset}' (the page is UTF-8)")


def test_a_set_file_larger_than_the_sets_budget_is_named_not_hashed(work):
    event = sorted((work / "runs").glob("*/tb/rank0/events*"))[0]
    with open(event, "r+b") as fh:
        fh.truncate(64 << 30)  # sparse: hashing it would read 64 GB
    t0 = time.monotonic()
    result = verify(work)
    assert time.monotonic() - t0 < 60
    rel = event.relative_to(work).as_posix()
    assert [p for p in result.problems() if p.startswith(f"scope: {rel}: 68,719,476,736 bytes, more than the set's "
                                                          "whole budget")], result.problems()


def _embedded_figure(root, name: str) -> str:
    data = (report_file(root, "figures") / name).read_bytes()
    return f'<p><img alt="forged" src="data:image/png;base64,{base64.b64encode(data).decode()}"></p>'


def test_an_extra_embedded_copy_of_a_figure_is_named(work):
    """A figure's bytes embedded once more (a second scaling chart ahead of the first figure,
    under another heading) passed: embedded images were only checked to be figures."""
    edit_text(report_file(work, "report.html"), '<p><img alt="throughput by repeat"',
              _embedded_figure(work, "scaling_bars.png") + '<p><img alt="throughput by repeat"')
    failing(work, "not one each in the order the report stage writes them")


def test_embedded_figures_swapped_or_twice_are_named(tmp_path):
    root = copy_committed_set(tmp_path, EMBEDDING_SET)
    page = report_file(root, "report.html")
    text = page.read_text()
    sources = re.findall(r'data:image/png;base64,[^"]*', text)
    assert len(sources) >= 2
    swapped = text.replace(sources[0], "\0").replace(sources[1], sources[0]).replace("\0", sources[1])
    page.write_text(swapped)
    failing(root, "not one each in the order the report stage writes them")
    page.write_text(text.replace(sources[1], sources[0], 1))
    failing(root, "not one each in the order the report stage writes them")
