"""What a reader of a report sees in its tables: the Markdown rendered as the report's HTML
is (Python-Markdown, the same extensions), then every table's header and cells as text.

Only what a renderer shows counts: HTML comments, `<script>`, `<style>`, `<template>` and
elements marked `hidden` or `display: none` are skipped, so a table kept inside a comment
is not read. The numbers of a cell are read with the precision it shows them at.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser

import markdown

from sacscale.report.document import MARKDOWN_EXTENSIONS

# (a browser shows text put in <head> outside these, in the body: it is read as the page's)
_INVISIBLE_TAGS = {"script", "style", "template", "title"}
# elements that run on within a line of text: `9.999<em>x</em>` shows as 9.999x; any other
# element parts the text before it from the text after it
_INLINE = {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd", "mark",
           "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr", "source", "area", "base", "embed", "track"}
# the page's frame, named in no block's place
_FRAME = {"html", "head", "body"}
# a table's cells are read as their row's line
_CELLS = {"td", "th"}
_NAMED_DEPTH = 8  # the innermost blocks named where a line stands
_LINE_BREAK = "a line break"
# a number as the tables print it: 1,234 / 0.984 / -12.50 / 98% / 1.715x; not the digit of a
# name such as r1 or n2 (a digit right after a letter), which labels a value. n/a, None and a
# lone ? are an absent value, as the tables print one. ASCII digits only: float() reads a
# fullwidth or Arabic-Indic digit as the digit it looks like, which a cell could show in
# place of the one the evidence gives ("\uff117,538" reads as 17,538)
# Digits are ASCII (a fullwidth or Arabic-Indic digit is not the stage's), but what may not
# touch a number is any letter or digit: `1.719¹x` is not the number 1.719.
_TOKEN = re.compile(r"(?P<na>\bn/a\b|\bNone\b|(?<!\S)\?(?!\S))|"
                    r"(?<![\w.])(?P<num>-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<dec>[0-9]+))?)"
                    r"(?P<unit>%|x)?(?![\w])")
# a condition in a cell, not a quantity: "(n < 3)"
_CONDITION = re.compile(r"\(\s*n\s*[<>=]+\s*\d+\s*\)", re.ASCII)


@dataclass
class ShownTable:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class ShownNumber:
    """A number as a cell shows it: its value in the cell's unit, its decimals, and
    whether it is a percentage (the quantity times 100). value None: n/a."""
    value: float | None
    decimals: int = 0
    percent: bool = False


class _TableReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[ShownTable] = []
        self._hidden_depth: list[str] = []  # open tags that hide what they hold
        self._table: ShownTable | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_head = False
        self._row_is_head = False  # a row of header cells: a table's header where it has no <thead>
        self.prose: list[str] = []  # the visible text outside the tables, as a browser shows it
        # all the visible text in page order, a table as its rows: (where it stands, its text),
        # where is the blocks that hold it, `ul>li`; an element that holds no text: (where, None)
        # (and the text with its inline elements marked, `⟨strong⟩At a glance:⟨/strong⟩`)
        self.lines: list[tuple[str, str | None, str | None]] = []
        self._line: list[str] = []
        self._line_marked: list[str] = []
        self._cell_marked: list[str] = []
        self._blocks: list[tuple[str, int]] = []  # open visible blocks, with _texts when each opened
        self._texts = 0  # lines of shown text so far
        self._open = Counter()  # how many of each tag _blocks holds
        self._flow_row: list[str] = []
        self._flow_row_marked: list[str] = []
        self._row_cells: list[str] = []
        self.links: list[str] = []  # where the page's links go, its tooltips and its title
        # a browser reads a title's content as text, `<em alt="...">` inside it included
        self.CDATA_CONTENT_ELEMENTS = (*HTMLParser.CDATA_CONTENT_ELEMENTS, "title")
        self._title: list[str] | None = None

    def _hides(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        values = dict(attrs)
        style = (values.get("style") or "").replace(" ", "").lower()
        return tag in _INVISIBLE_TAGS or "hidden" in values or "display:none" in style

    def _where(self) -> str:
        """The blocks that hold what is read now, the innermost few (a page nested deeper than
        the stage's says how deep)."""
        tags = [tag for tag, _ in self._blocks[-_NAMED_DEPTH:]]
        deeper = len(self._blocks) - len(tags)
        return ">".join(([f"{deeper} more"] if deeper else []) + tags)

    def _add_line(self, where: str, text: str, marked: str | None = None) -> None:
        self.lines.append((where, text, text if marked is None else marked))
        self._texts += bool(_shown_text(where, text))

    def _parts(self) -> None:
        """End the line of text that is open: a block begins or ends here."""
        self.prose.append("\n")
        text, marked = "".join(self._line), "".join(self._line_marked)
        self._line, self._line_marked = [], []
        if text:
            where = self._where()
            for part, part_marked in zip(text.split("\n"), marked.split("\n"), strict=True):
                self._add_line(where, part, part_marked)

    def _line_of_its_own(self, text: str, where: str | None = None, marked: str | None = None) -> None:
        self._parts()
        self._add_line(self._where() if where is None else where, text, marked)

    def _mark(self, token: str) -> None:
        """An inline element begins or ends here: how the text it holds is drawn (bold, code)."""
        if not self._hidden_depth:
            (self._cell_marked if self._cell is not None else self._line_marked).append(token)

    def _open_block(self, tag: str) -> None:
        if tag not in _FRAME:
            self._blocks.append((tag, self._texts))
            self._open[tag] += 1

    def _close_block(self, tag: str) -> None:
        """Close `tag` and what is open inside it, as a browser does; an element that held no
        text is still in the page's structure (an empty bullet, an empty heading)."""
        if not self._open[tag]:
            return
        while self._blocks:
            where = self._where()
            inner, texts_before = self._blocks.pop()
            self._open[inner] -= 1
            if inner not in _CELLS and self._texts == texts_before:
                self.lines.append((where, None, None))
            if inner == tag:
                return

    def _note_links(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a":
            self.links.append(f"link to {values.get('href')}")
        if tag == "hr" and not self._hidden_depth:
            self._line_of_its_own("[rule]")
        if tag == "img":
            self.links.append(f"image {values.get('src')} ({values.get('alt')})")
            if not self._hidden_depth:  # where it stands: under which heading, beside which caption
                self._line_of_its_own(f"[image {values.get('src')}]")
        if values.get("title") is not None:
            self.links.append(f"tooltip {values['title']}")
        if tag == "title":
            self._title = []

    def handle_starttag(self, tag, attrs):
        self._note_links(tag, attrs)
        if tag in _INLINE:
            self._mark(f"⟨{tag}⟩")
        else:
            self._parts()
        if tag == "br" and self._cell is not None and not self._hidden_depth:
            self._cell.append(" ")  # a line break parts what it stands between: `1.7<br>19x` is no 1.719x
            self._cell_marked.append(" ")
        elif tag == "br" and not self._hidden_depth:
            self.lines.append((self._where(), None, _LINE_BREAK))  # each one draws a line: 500 push text down
        if tag in _VOID:
            return
        if self._hidden_depth or self._hides(tag, attrs):
            self._hidden_depth.append(tag)
            return
        # a browser ends an open cell at the next cell or row, and an open row at the next
        # row: `<td>9.999x<td>1.719x` is two cells, not one that holds 1.719x
        if tag in ("td", "th", "tr"):
            self.handle_endtag("td" if self._cell is not None else "")
        if tag == "tr":
            self.handle_endtag("tr")
        if tag not in _INLINE:
            self._open_block(tag)
        if tag == "table":
            self._table = ShownTable(header=[])
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._flow_row, self._flow_row_marked = [], []
            self._row_cells = []
            self._row_is_head = False
        elif tag in ("td", "th") and self._row is not None:
            self._cell, self._cell_marked = [], []
            self._row_cells.append(tag)
            self._row_is_head = tag == "th" and (self._row_is_head or not self._row)

    def handle_endtag(self, tag):
        if tag == "title" and self._title is not None:
            self.links.append(f"title {''.join(self._title)}")
            self._title = None
        if tag in _INLINE:
            self._mark(f"⟨/{tag}⟩")
        else:
            self._parts()
        if self._hidden_depth:
            if tag == self._hidden_depth[-1]:
                self._hidden_depth.pop()
            return
        self._end_table_part(tag)
        if tag not in _INLINE:
            self._close_block(tag)

    def _end_table_part(self, tag: str) -> None:
        if tag in ("tr", "thead", "tbody", "table") and self._cell is not None:
            self.handle_endtag("td")  # an end that closes what is open inside it, as a browser does
        if tag in ("thead", "tbody", "table") and self._row is not None:
            self.handle_endtag("tr")
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._flow_row.append("".join(self._cell).replace("|", "\\|"))  # one cell is not two
            self._flow_row_marked.append("".join(self._cell_marked).replace("|", "\\|"))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self._line_of_its_own(" | ".join(self._flow_row), f"{self._where()}>{','.join(self._row_cells)}",
                                  " | ".join(self._flow_row_marked))
            if self._in_head or (self._row_is_head and not self._table.header and not self._table.rows):
                self._table.header = self._row
            else:
                self._table.rows.append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._title is not None:
            self._title.append(data)
        if not self._hidden_depth and self._cell is not None:
            self._cell.append(data)
            self._cell_marked.append(data)
        elif not self._hidden_depth and self._table is None:
            self.prose.append(data)
            self._line.append(data)
            self._line_marked.append(data)
        elif not self._hidden_depth and data.strip():
            # text in a table outside its cells: a browser shows it above the table
            self.prose.append(f"\n{data}\n")
            self._line_of_its_own(data)


# Python-Markdown's time grows with the square of a paragraph's length when it is full of
# escapes and entities (184 KB: 3 s; 2 MB: minutes; a page of 64 MB: days): a reader of a
# page refuses one with a paragraph far longer than the report stage writes (its longest
# are a few KB; a value from outside the code is cut at 2,000 characters). Tables and
# fenced blocks are read line by line and are not bounded here.
LONGEST_PARAGRAPH = 128 * 1024


def long_paragraph(markdown_text: str) -> str | None:
    """Why this Markdown is not rendered here (a paragraph longer than LONGEST_PARAGRAPH), or None."""
    size = longest = 0
    for line in markdown_text.splitlines():
        plain_line = line.strip() and not line.lstrip().startswith(("|", "```", "~~~"))
        size = size + len(line) + 1 if plain_line else 0
        longest = max(longest, size)
    return (f"a paragraph of {longest:,} characters, far longer than the report stage writes (at most "
            f"{LONGEST_PARAGRAPH:,} read here)") if longest > LONGEST_PARAGRAPH else None


def shown_tables(markdown_text: str) -> list[ShownTable]:
    """Every table a renderer shows of this Markdown, header and rows as text."""
    return shown_page(markdown_text, html=False)[0]


def shown_html_tables(html_text: str) -> list[ShownTable]:
    """Every table a browser shows of this HTML (report.html), header and rows as text."""
    return shown_page(html_text, html=True)[0]


def shown_page(text: str, html: bool) -> tuple[list[ShownTable], str]:
    """A page's tables, and its visible text outside them (entities decoded, markup gone,
    one line per block), as a browser shows the HTML or the Markdown rendered."""
    page = _read(text, html)
    return [ShownTable(list(t.header), [list(row) for row in t.rows]) for t in page.tables], page.prose


_ASCII_BLANKS = re.compile("[ \t\f]+")


@dataclass(frozen=True)
class ShownView:
    """What verify compares of a page with the page its evidence gives.

    lines: everything a reader sees, in order, one line per block (a table: one line per row,
    its cells joined by ` | `), blanks within a line collapsed but in preformatted blocks, whose
    columns they align, and empty lines left out. links: where its links go, its images (with
    their alternative text), its tooltips and its title: what a reader sees only by pointing
    at it, in the browser's tab or as a picture, and the page a click opens. blocks: each line
    with the elements that hold it and its inline elements marked (`'⟨em⟩Warning⟨/em⟩: ...' in
    <blockquote>p`), and each element that holds no text: how the page draws what it says."""
    lines: list[str]
    links: list[str]
    blocks: list[str]


def _shown_text(where: str, text: str) -> str:
    preformatted = "pre" in where.split(">")
    # HTML collapses ASCII whitespace only: U+1680, which a browser draws as a dash, is kept
    return text.rstrip(" \t\f") if preformatted else _ASCII_BLANKS.sub(" ", text).strip(" ")


def shown_view(text: str, html: bool) -> ShownView:
    """The page's ShownView, read once."""
    page = _read(text, html)
    lines, blocks = [], []
    for where, raw, marked in page.lines:
        if raw is None:
            blocks.append(f"{marked or 'nothing'} in <{where}>")
        elif shown := _shown_text(where, raw):
            lines.append(shown)
            blocks.append(f"{_shown_text(where, marked)!r} in <{where}>")
        elif "pre" in where.split(">"):
            blocks.append(f"a blank line in <{where}>")  # a preformatted block draws it
    return ShownView(lines, list(page.links), blocks)


@lru_cache(maxsize=8)
def rendered_markdown(markdown_text: str) -> str:
    """The page's HTML as Python-Markdown renders it; verify reads one report.md for its
    tables, its prose, its markup and its video, so the last few pages rendered are kept."""
    return markdown.markdown(markdown_text, extensions=MARKDOWN_EXTENSIONS, output_format="html")


@dataclass(frozen=True)
class _ReadPage:
    """What _TableReader read of a page, kept for the page's next reader."""
    tables: tuple[ShownTable, ...]
    prose: str
    lines: tuple[tuple[str, str | None, str | None], ...]
    links: tuple[str, ...]


@lru_cache(maxsize=8)
def _read(text: str, html: bool) -> _ReadPage:
    """The page read once by its text: verify's checks each read report.md and report.html,
    and a page changed on disk is other text, read again. Callers get copies of its tables."""
    reader = _TableReader()
    page = text if html else rendered_markdown(text)
    # a browser reads a carriage return as a line break before it parses the page
    reader.feed(page.replace("\r\n", "\n").replace("\r", "\n"))
    reader.close()
    reader.handle_endtag("")  # the line still open
    return _ReadPage(tuple(reader.tables), "".join(reader.prose), tuple(reader.lines), tuple(reader.links))


def shown_numbers(cell: str) -> list[ShownNumber]:
    """The numbers a cell shows, in order (n/a as None)."""
    out = []
    cell = cell.replace("\u2212", "-")  # the minus sign: `−1.719x` is not 1.719
    for match in _TOKEN.finditer(_CONDITION.sub("", cell)):
        if match["na"]:
            out.append(ShownNumber(None))
            continue
        out.append(ShownNumber(float(match["num"].replace(",", "")), len(match["dec"] or ""), match["unit"] == "%"))
    return out


def shows(number: ShownNumber, quantity: float | None) -> bool:
    """Whether the cell's number is the quantity rounded to the decimals it shows (a
    percentage: the quantity times 100). Half a unit of the last place either way, and a
    hair more for a quantity that lies on the rounding boundary."""
    if number.value is None or quantity is None:
        return number.value is None and quantity is None
    value = 100 * quantity if number.percent else quantity
    half = 0.5 * 10 ** -number.decimals
    return abs(number.value - value) <= half * (1 + 1e-9) + 1e-12 * abs(value)
