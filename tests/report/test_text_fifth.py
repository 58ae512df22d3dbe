"""Invisible characters in text from outside the code (issue 36, faults row 28): a set or
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
