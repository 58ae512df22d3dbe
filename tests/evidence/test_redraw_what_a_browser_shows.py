"""`verify --redraw-figures` on figures a browser shows otherwise than their pixels:
pixels made transparent (compared as RGB, the alpha dropped), and
a gamma, colour-profile or animation chunk added (the pixels untouched, the page showing
other colours or other frames) all passed."""

import struct
import zlib

import pytest
from PIL import Image, PngImagePlugin

from sacscale.evidence.redraw import same_pixels, shown_otherwise
from sacscale.evidence.verify import verify
from sacscale.report.figure_names import FIGURES
from test_redraw_figures import _drawn_here
from set_copies import report_file


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _add_chunk(path, kind, data):
    """The chunk inserted before the image data, every other byte kept."""
    raw = path.read_bytes()
    at = raw.index(b"IDAT") - 4
    path.write_bytes(raw[:at] + _chunk(kind, data) + raw[at:])


def _transparent_top(path):
    with Image.open(path) as image:
        image.load()
        texts, rgba = dict(image.text), image.convert("RGBA")
    pixels = rgba.load()
    for x in range(rgba.size[0]):
        for y in range(rgba.size[1] // 2):
            pixels[x, y] = pixels[x, y][:3] + (0,)
    info = PngImagePlugin.PngInfo()
    for key, value in texts.items():
        info.add_text(key, value)
    rgba.save(path, pnginfo=info)


def _animated(path):
    with Image.open(path) as image:
        image.load()
        first = image.convert("RGBA")
    other = Image.new("RGBA", first.size, (255, 0, 0, 255))
    first.save(path, save_all=True, append_images=[other], default_image=True, duration=100)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    return report_file(_drawn_here(tmp_path_factory.mktemp("drawn")), "figures") / FIGURES["scaling_bars"]


@pytest.mark.parametrize("edit, says", [
    (lambda p: _add_chunk(p, b"gAMA", struct.pack(">I", 10000)), "'gAMA'"),
    (lambda p: _add_chunk(p, b"iCCP", b"x\0\0" + zlib.compress(b"\0" * 128)), "'iCCP'"),
    (_animated, "'acTL', 'fcTL', 'fdAT'"),
])
def test_a_chunk_that_changes_what_a_browser_shows_is_named(drawn, tmp_path, edit, says):
    shown = tmp_path / drawn.name
    shown.write_bytes(drawn.read_bytes())
    edit(shown)
    assert same_pixels(drawn, shown)  # the pixels alone do not tell
    assert says in shown_otherwise(drawn, shown)


def test_pixels_made_transparent_differ(drawn, tmp_path):
    shown = tmp_path / drawn.name
    shown.write_bytes(drawn.read_bytes())
    _transparent_top(shown)
    assert not same_pixels(drawn, shown)


def test_the_figure_as_drawn_is_shown_as_drawn(drawn):
    assert same_pixels(drawn, drawn) and shown_otherwise(drawn, drawn) is None


def test_verify_names_a_figure_given_a_gamma(tmp_path):
    work = _drawn_here(tmp_path)
    figure = report_file(work, "figures") / FIGURES["phase_times"]
    _add_chunk(figure, b"gAMA", struct.pack(">I", 10000))
    problems = verify(work, redraw_figures=True).problems()
    assert len(problems) == 1 and problems[0].startswith(
        f"derived: reports/{work.name}/figures/phase_times.png: not shown as the figure the evidence draws here "
        "(PNG chunk(s) 'gAMA' that the figure drawn here lacks"), problems
