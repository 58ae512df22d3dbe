"""Text from outside the code (run and attempt names, recorded environment variables,
paths, config and record values) made inert for the report's Markdown.

The report is Markdown rendered by Python-Markdown, which passes HTML through and reads
`*`, `_`, `[...](...)` and backticks as markup. A value is escaped where it enters the
report, once: `plain` for prose and table cells, `code` for a code span, `fence` for a
fenced block. Both leave an ordinary name (letters, digits, `_` inside a word, `-`, `.`,
`/`, `:`, `,`, `=`) exactly as it is, so the reports of committed sets render as they did.
"""

from __future__ import annotations

import html
import re

# Control characters (newlines included) would start a new Markdown block: a line that
# begins with `<div>` or `#` is read as block markup, so a value stays on one line. Bidi
# controls (embeddings, overrides, isolates, marks) would show the rest of a line reversed.
# Zero-width characters (U+200B, U+FEFF, a soft hyphen, ...) would make one name look like
# another (`h200x1\u200b` as `h200x1`): shown as a blank too.
# Letters and marks that show as nothing (Hangul fillers, variation selectors, tag
# characters, the grapheme joiner) hide what they touch as well: a filler before a number
# makes it part of a word (`\u31649.999x`), which a reader of a table's numbers skips.
BLANK_LETTERS = "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0000-\U000e0fff"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e"
                      r"\u2060-\u2069\ufeff" + BLANK_LETTERS + "]+")
# Characters Python-Markdown reads as inline markup and un-does with a backslash.
_BACKSLASHED = re.compile(r"([\\`*\[\]!])")
# `_` emphasises only where it is not inside a word (smart emphasis; CommonMark alike).
_LONE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# `~` strikes text through on GitHub (GFM reads `~~x~~`, and `~x~`, as <del>), which
# Python-Markdown does not, and neither un-does with a backslash: an entity is text in both.
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "~": "&#126;"}


# A value longer than this is shown cut, saying so: Python-Markdown's time grows with the
# square of an escaped value's length (a recorded value of 200,000 characters took the
# report stage 5 minutes; a megabyte, hours). The longest any record of the committed sets
# holds is under 800 characters.
LONGEST = 2000


def one_line(value, blanked: re.Pattern = _CONTROL) -> str:
    # a file name that is not UTF-8 reaches us with surrogates (`\udcff` for the byte 0xff),
    # which no UTF-8 page can hold: shown escaped, as text
    text = str(value)
    if len(text) > LONGEST:
        text = f"{text[:LONGEST]} ... ({len(text):,} characters in all, shown cut)"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return blanked.sub(" ", text)


# A recorded tool output (`lscpu`, `nvidia-smi topo -m`) keeps its tabs, which align its
# columns; every other control character is blanked as in prose.
_CONTROL_BUT_TAB = re.compile(_CONTROL.pattern.replace(r"\x00-\x1f", r"\x00-\x08\x0a-\x1f", 1))


def block_line(value) -> str:
    """One line of a fenced block (a recorded tool output): as `one_line`, tabs kept."""
    return one_line(value, _CONTROL_BUT_TAB)


def plain(value) -> str:
    """`value` as literal text in Markdown prose or a table cell (tables escape `|`)."""
    text = "".join(_ENTITIES.get(ch, ch) for ch in one_line(value))  # `<`, `&`, `~`: no backslash escape
    text = _BACKSLASHED.sub(r"\\\1", text)
    return _LONE_UNDERSCORE.sub(r"\\_", text)


def code(value) -> str:
    """`value` as a code span: a run of backticks longer than any inside the value
    delimits it (a single backtick would be closed by the value's own)."""
    text = one_line(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    # a value that starts or ends with a backtick, or is blank, is padded: the span strips
    # the padding, and the delimiter cannot merge with the value's backticks
    pad = " " if not text.strip() or text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str) -> str:
    """The backtick fence for a fenced block of `text`: longer than any backtick run in it,
    so no line of the text closes the block."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def unmarkdown(text: str) -> str:
    """Text escaped by `plain` as a reader sees it (for the HTML page's title)."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text))
