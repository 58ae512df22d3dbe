"""Invisible characters in text from outside the code (docs/faults.md row 28): a set or
run name, a GPU name, a recorded value holding a zero-width space, a word joiner, a
byte-order mark or a soft hyphen was shown as written, so `h200x1\\u200b` read as
`h200x1` in a report or the status summary. They are shown as a blank now, as control
and bidi characters already were."""

import pytest

from sacscale.report.text import code, one_line, plain


@pytest.mark.parametrize("hidden", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u061c"])
def test_an_invisible_character_is_shown_as_a_blank(hidden):
    name = f"h200x1{hidden}"
    assert one_line(name) == "h200x1 "
    assert hidden not in plain(name)
    assert hidden not in code(name)


def test_ordinary_names_are_unchanged():
    for name in ("h200x1_shared_short", "NVIDIA H200", "2.11.0+cu130", "n1_pool7"):
        assert one_line(name) == name


@pytest.mark.parametrize("hidden", ["\u3164", "\u115f", "\uffa0", "\u034f", "\ufe0f", "\U000e0031"])
def test_a_letter_or_mark_that_shows_as_nothing_is_a_blank_too(hidden):
    """Hangul fillers are letters, variation selectors and tags marks or format characters
    of their own that show as nothing: `a\\u3164b` read as `a b`."""
    assert one_line(f"a{hidden}b") == "a b"


def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path):
    """logs/S/attempts holding a folder named with the byte 0xff (`\\udcff` once read) ended
    the report stage in a UnicodeEncodeError, exit 1 as unexpected."""
    import os
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"r1.failed-\xff"))
    name = next(p.name for p in tmp_path.iterdir())
    assert plain(name) == "r1.failed-\\\\udcff" and code(name) == "`r1.failed-\\udcff`"
    (plain(name) + code(name)).encode("utf-8")
