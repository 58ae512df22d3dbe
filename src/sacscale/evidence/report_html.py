"""report.html read as a browser shows it: its tables checked like report.md's, and nothing
in it that could show another page than the one the report stage wrote.

The numbers of report.html's visible tables must be the evidence's, cell by cell, as
report.md's are (sacscale.evidence.report_check). Hiding is what the table reader cannot
see through: a stylesheet that hides a class, a script that rewrites a cell. So the page
may hold only what the report stage writes: its own stylesheet (the current one, or the
one of the first reports), inline styles that align text, the classes l, r and caption,
and none of the elements that run code or pull in other content.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

from sacscale.reading import read_limited
from sacscale.report.document import _STYLE, IMAGE_TYPES
from sacscale.report.figure_names import FIGURES
from sacscale.report.shown import rendered_markdown

# the report stage's stylesheets: today's, and the one of the first reports (h200x1, h200x2)
KNOWN_STYLES = {hashlib.sha256(_STYLE.encode()).hexdigest(),
                "f60b37d484c656088e4b2476d05ff7a8b0fdeb2d79d82685777fd4614a710e6a"}
_FOREIGN_TAGS = {"script", "link", "iframe", "frame", "frameset", "object", "embed", "base", "svg", "math",
                 "noscript", "template", "form", "input", "button", "dialog", "details", "canvas", "video", "audio",
                 "applet", "portal"}
# what the report stage writes (Python-Markdown's output in the page's frame); any other
# element or attribute could change how the tables look (<font color=white>, bgcolor)
_KNOWN_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "h5", "h6", "p", "a",
               "em", "strong", "code", "pre", "ul", "ol", "li", "dl", "dt", "dd", "blockquote", "br", "hr", "img",
               "figure", "figcaption", "table", "thead", "tbody", "tr", "th", "td", "term"}
_KNOWN_ATTRS = {"lang", "charset", "name", "content", "href", "src", "alt", "title", "id", "class", "style"}
# an image of the page: embedded, or one of the figures the report stage draws, named as it
# names them (a browser reads `HTTPS://`, ` //host`, `%2e%2e/` as another site or folder)
_IMAGE = re.compile(r"data:image/(png|gif|webp|jpeg);base64,.*", re.ASCII | re.DOTALL)
STAGE_FIGURES = frozenset({f"figures/{name}" for name in FIGURES.values()}
                          | {f"figures/best_run{suffix}" for suffix in IMAGE_TYPES if suffix != ".png"})
# a browser drops these from a URL before reading its scheme: `\x01javascript:` runs
_URL_IGNORED = re.compile(r"[\x00-\x20\x7f]")
_INLINE_STYLE = re.compile(r"\s*text-align:\s*(left|right|center)\s*;?\s*")
_CLASSES = {"l", "r", "caption"}
# The page's frame, which the stage writes once, head before body. A browser ignores a
# <head> or <html> inside the body (what it holds is shown) and reads all up to </title>
# as text (`<title/>` stays open), where a parser that takes them at their word hides the
# one and shows the other: `<td><title/>1.719x</title><head>9.999x</head></td>` shows 9.999x.
_FRAME = {"html", "head", "body", "title"}
_HEAD_ONLY = {"head", "title", "meta", "style"}
_VOID_TAGS = {"br", "hr", "img", "meta", "wbr", "col", "area", "base", "embed", "input", "link", "source",
              "track"}


# the order the report stage shows its figures in, each once (sacscale.report.build)
_FIGURE_ORDER = {f"figures/{name}": i for i, name in enumerate(FIGURES.values())}


def _order_problems(rel: str, images: list[str]) -> list[str]:
    """The stage's figures a page shows are in the stage's order and each at most once: two
    references swapped showed each figure under the other's heading and caption."""
    shown = [s for s in images if s in _FIGURE_ORDER]
    if [_FIGURE_ORDER[s] for s in shown] == sorted({_FIGURE_ORDER[s] for s in shown}):
        return []
    names = ", ".join(s.removeprefix("figures/") for s in shown)
    return [f"{rel}: shows its figures as {names}, not one each in the order the report stage writes them (a "
            "figure under another's heading and caption): does not match the evidence"]


def _decoded(source: str) -> bytes:
    try:
        return base64.b64decode(source.partition(",")[2], validate=False)
    except ValueError:
        return b""


def _bytes(figure: Path) -> bytes:
    """A figure's bytes, read as records are (not through a link, not a FIFO); b"" when
    they cannot be read (no figure matches them)."""
    try:
        return read_limited(figure)
    except (OSError, ValueError):
        return b""


def _figure_problems(rel: str, reader: "_Presentation", folder: Path) -> list[str]:
    """Every figure the page shows is in its folder; an embedded one is, byte for byte, one
    of the stage's figures there (the page embeds the files report.md shows)."""
    missing = [s for s in reader.images if not (folder / s).is_file()]
    problems = [f"{rel}: shows the figure {s[:80]!r}, which is not in its folder: does not match the evidence"
                for s in missing[:3]]
    files = {hashlib.sha256(_bytes(folder / s)).hexdigest(): s
             for s in sorted(STAGE_FIGURES) if reader.embedded and (folder / s).is_file()}
    # an embedded copy of a figure is that figure shown: once, in its place, as a reference is
    shown = [files.get(hashlib.sha256(image).hexdigest()) if isinstance(image, bytes) else image
             for image in reader.shown]
    if None in shown:
        problems.append(f"{rel}: {shown.count(None)} embedded image(s) that are none of the figures in its "
                        "folder: does not match the evidence")
    return problems + _order_problems(rel, [name for name in shown if name])


class _Presentation(HTMLParser):
    def __init__(self, fragment: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._fragment = fragment  # rendered Markdown: no frame of its own
        self._opened: set[str] = set()  # frame elements seen
        self.ended = False  # </html> seen: the page was written to its end
        self._style: list[str] | None = None
        self.images: list[str] = []  # files of the report's folder the page shows
        self.embedded: list[bytes] = []  # images the page holds as data URIs
        self.shown: list[str | bytes] = []  # both, in the page's order

    def _check_element(self, tag: str, values: dict) -> None:
        """Only the elements and attributes the report stage writes; images of its own."""
        if tag in _FOREIGN_TAGS or tag not in _KNOWN_TAGS:
            self.problems.append(f"a <{tag[:40]}> element")
        for name in sorted(set(values) - _KNOWN_ATTRS):
            if not name.startswith("on"):
                self.problems.append(f"an attribute {name[:40]!r} on <{tag[:40]}>")
        if tag == "img":
            source = values.get("src") or ""
            if source in STAGE_FIGURES:
                self.images.append(source)
                self.shown.append(source)
            elif not _IMAGE.fullmatch(source):
                self.problems.append(f"an image from elsewhere or not a figure of the report stage ({source[:40]!r})")
            else:
                self.embedded.append(_decoded(source))
                self.shown.append(self.embedded[-1])

    def _check_frame(self, tag: str) -> None:
        """The frame's elements once each, in their place; none in rendered Markdown."""
        if tag in _FRAME | _HEAD_ONLY and self._fragment:
            self.problems.append(f"a <{tag}> element (the page's frame, which Markdown does not write)")
        elif tag in _FRAME and tag in self._opened:
            self.problems.append(f"a second <{tag}> (a browser ignores it and shows what it holds)")
        elif tag in _HEAD_ONLY and "body" in self._opened:
            self.problems.append(f"a <{tag}> inside the body (a browser ignores it or shows what follows as text)")
        self._opened.add(tag)

    def handle_startendtag(self, tag, attrs):
        if tag not in _VOID_TAGS:
            self.problems.append(f"a self-closing <{tag[:40]}/> (a browser ignores the slash: the element stays open)")
        super().handle_startendtag(tag, attrs)

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        self._check_frame(tag)
        self._check_element(tag, values)
        if tag == "style":
            self._style = []
        if tag == "meta" and set(values) != {"charset"}:  # `name="color-scheme"` turned the headers white on grey
            self.problems.append(f"a <meta> with {', '.join(sorted(set(values) - {'charset'})) or 'no charset'} "
                                 "(the stage writes only its charset)")
        if tag == "meta" and "charset" in values and (values["charset"] or "").strip().lower() != "utf-8":
            # read here as UTF-8: a browser told another encoding shows other characters (ISO-2022-JP: digits)
            self.problems.append(f"a charset {(values['charset'] or '')[:20]!r} (the page is UTF-8)")
        style = values.get("style")
        if style is not None and not _INLINE_STYLE.fullmatch(style):
            self.problems.append(f"an inline style {style[:60]!r}")
        for name in values.get("class", "").split() if values.get("class") else ():
            if name not in _CLASSES:
                self.problems.append(f"a class {name[:40]!r}")
        for name in ("href", "src"):
            target = _URL_IGNORED.sub("", "".join((values.get(name) or "").split())).lower()
            if target.startswith(("javascript:", "vbscript:", "data:text")):
                self.problems.append(f"a {name} that runs or shows another page ({target[:30]!r})")
        for name in values:
            if name.startswith("on"):
                self.problems.append(f"an event handler {name[:40]!r}")

    def handle_endtag(self, tag):
        self.ended = tag == "html"
        if tag == "style" and self._style is not None:
            sheet = "".join(self._style)
            if hashlib.sha256(sheet.encode()).hexdigest() not in KNOWN_STYLES:
                self.problems.append("a stylesheet the report stage does not write")
            self._style = None

    def handle_data(self, data):
        if self._style is not None:
            self._style.append(data)

    # The report stage writes no comment, processing instruction or declaration but the
    # doctype. A browser ends a comment at `--!>`, this parser (Python 3.11) at `-->` only:
    # `<!--a--!>9.999x<!-- -->` is one comment here and shows 9.999x there.
    def handle_comment(self, data):
        self.problems.append("an HTML comment")

    def handle_pi(self, data):
        self.problems.append("a processing instruction")

    def handle_decl(self, decl):
        if decl.strip().lower() != "doctype html":
            self.problems.append(f"a declaration {decl[:40]!r}")

    def unknown_decl(self, data):
        self.problems.append("a marked section (<![...]>)")


# an element of the first reports' Markdown: `Time/<phase>_ms` written unescaped (h200x1, h200x2)
_LEGACY_MARKDOWN = {"a <phase> element"}


# A table's delimiter row (`|---|---:|`): GitHub (GFM) starts a table at one even right
# under a line of prose, Python-Markdown only after a blank line; such a table would show
# numbers of its own that verify reads as prose
_DELIMITER_ROW = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _delimiter_rows(markdown_text: str) -> int:
    """How many table delimiter rows a GFM renderer sees outside fenced code blocks and HTML
    comments (a comment block runs from a line that starts `<!--` to the line with `-->`)."""
    count, fence, comment = 0, None, False
    for line in markdown_text.splitlines():
        opened = _FENCE.match(line)
        if comment:
            comment = "-->" not in line
        elif fence is not None:
            fence = None if line.strip().startswith(fence) else fence
        elif opened:
            fence = opened.group(1)[0] * 3
        elif line.lstrip(" ").startswith("<!--") and len(line) - len(line.lstrip(" ")) <= 3:
            comment = "-->" not in line[line.index("<!--") + 4:]
        elif "|" in line and _DELIMITER_ROW.fullmatch(line):
            count += 1
    return count


def rendered_markdown_problems(rel: str, markdown_text: str) -> list[str]:
    """report.md rendered (as GitHub or Python-Markdown would: raw HTML passes through) and
    read as report.html is: the report stage's Markdown holds no HTML of its own."""
    page = rendered_markdown(markdown_text)
    reader = _Presentation(fragment=True)
    reader.feed(page)
    reader.close()
    rows, tables = _delimiter_rows(markdown_text), page.count("<table>")
    if rows != tables:
        reader.problems.append(f"{rows} table delimiter row(s) (|---|) for {tables} table(s) read here: a table "
                               "GitHub shows where this reader sees prose")
    seen = [p for i, p in enumerate(reader.problems) if p not in reader.problems[:i] and p not in _LEGACY_MARKDOWN]
    return _order_problems(rel, reader.images) + [
        f"{rel}: {problem} (it could hide or change what is shown): the report stage writes none; "
        f"does not match the evidence" for problem in seen[:5]]


def figures_shown(text: str, markdown_page: bool) -> set[str]:
    """The stage's figures (`figures/NAME.png`) a page shows; report.md is rendered first."""
    page = rendered_markdown(text) if markdown_page else text
    reader = _Presentation(fragment=markdown_page)
    reader.feed(page)
    reader.close()
    return {s for s in reader.images if s in _FIGURE_ORDER}


def presentation_problems(rel: str, html_text: str, folder: Path | None = None) -> list[str]:
    """What in report.html could make a browser show other numbers than its tables hold;
    with `folder` (the page's), also every figure file it shows that is not there."""
    reader = _Presentation()
    reader.feed(html_text)
    reader.close()
    if not reader.ended:
        reader.problems.append("no </html> at its end (a page cut short: the stage writes it whole)")
    seen: list[str] = []
    for problem in reader.problems:
        if problem not in seen:
            seen.append(problem)
    figures = _order_problems(rel, reader.images) if folder is None else _figure_problems(rel, reader, folder)
    return figures + \
        [f"{rel}: {problem} (it could hide or change what is shown): the report stage writes none; "
         f"does not match the evidence" for problem in seen[:5]]


# what in a hand-written page can hide text or send the reader elsewhere besides the report
# page's foreign tags: a <meta> refresh, a font colour
_HIDING_TAGS = {"style", "meta", "font"}


class _Active(HTMLParser):
    """Raw HTML in a hand-written page that would run code or hide what is shown; other
    markup (a <br>, an <img> of its own, the text-align Markdown writes for a table's
    aligned columns) is left to the reader."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag in _FOREIGN_TAGS or tag in _HIDING_TAGS:
            self.problems.append(f"a <{tag[:40]}> element")
        for name in values:
            if name.startswith("on"):
                self.problems.append(f"an event handler {name[:40]!r}")
            elif name == "style" and not _INLINE_STYLE.fullmatch(values[name] or ""):
                self.problems.append(f"an inline style on <{tag[:40]}>")
            elif name == "hidden":
                self.problems.append(f"a hidden <{tag[:40]}>")
        for name in ("href", "src"):
            target = _URL_IGNORED.sub("", "".join((values.get(name) or "").split())).lower()
            if target.startswith(("javascript:", "vbscript:", "data:text")):
                self.problems.append(f"a {name} that runs or shows another page ({target[:30]!r})")

    def handle_comment(self, data):
        self.problems.append("an HTML comment")


def active_markup_problems(rel: str, markdown_text: str) -> list[str]:
    """A hand-written Markdown page rendered as GitHub would (raw HTML passes through): the
    markup the report page may not hold that runs code or hides content."""
    reader = _Active()
    reader.feed(rendered_markdown(markdown_text))
    reader.close()
    seen = [p for i, p in enumerate(reader.problems) if p not in reader.problems[:i]]
    return [f"{rel}: {problem} (it could run code or hide what the page shows)" for problem in seen[:5]]
