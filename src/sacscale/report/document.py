"""A small document model written out as Markdown and as self-contained HTML.

The report is built once as a list of blocks and rendered twice, so the Markdown and
the HTML always say the same thing. The HTML is the
Markdown rendered by Python-Markdown (tables, fenced code), so the two cannot drift
apart. Block text is Markdown written by the code; every value from outside it
(names, paths, records) is escaped where it enters (sacscale.report.text).
"""

from __future__ import annotations

import base64
import html
from urllib.parse import quote
from dataclasses import dataclass, field
from pathlib import Path

import markdown

from sacscale.report.text import fence, unmarkdown


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Paragraph:
    text: str


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    align: list[str] | None = None   # "l" or "r" per column
    caption: str = ""


@dataclass
class Image:
    path: str                        # relative to the report's directory (a file path, not a URL)
    alt: str                         # Markdown
    caption: str = ""


@dataclass
class Code:
    text: str


@dataclass
class Raw:
    """Markdown copied verbatim (e.g. docs/deviations.md), rendered as Markdown in HTML."""
    markdown: str


@dataclass
class Document:
    title: str
    blocks: list = field(default_factory=list)

    def add(self, *blocks) -> "Document":
        self.blocks.extend(blocks)
        return self


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _url(path: str) -> str:
    """A file path as a link target: percent-encoded, so a space or `)` in it cannot end
    the link (data URIs are already URLs)."""
    return path if path.startswith("data:") else quote(path, safe="/")


def to_markdown(doc: Document) -> str:
    out = [f"# {doc.title}", ""]
    for b in doc.blocks:
        if isinstance(b, Heading):
            out += [f"{'#' * b.level} {b.text}", ""]
        elif isinstance(b, Paragraph):
            out += [b.text, ""]
        elif isinstance(b, Bullets):
            out += [f"- {item}" for item in b.items] + [""]
        elif isinstance(b, Table):
            align = b.align or ["l"] * len(b.header)
            out.append("| " + " | ".join(_md_cell(h) for h in b.header) + " |")
            out.append("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
            out.append("")
            if b.caption:
                out += [f"*{b.caption}*", ""]
        elif isinstance(b, Image):
            out += [f"![{b.alt}]({_url(b.path)})", ""]
            if b.caption:
                out += [f"*{b.caption}*", ""]
        elif isinstance(b, Code):
            ticks = fence(b.text)
            out += [ticks, b.text.rstrip("\n"), ticks, ""]
        elif isinstance(b, Raw):
            out += [b.markdown.rstrip("\n"), ""]
        else:
            raise TypeError(f"unknown block {b!r}")
    return "\n".join(out).rstrip("\n") + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 68rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.6rem; }
th { background: #eee; }
td { font-variant-numeric: tabular-nums; }
pre { background: #f5f5f5; padding: 0.6rem; overflow-x: auto; }
img { max-width: 100%; }
"""
# Python-Markdown's maintained extensions: pipe tables (with their alignment row) and fenced code
MARKDOWN_EXTENSIONS = ["tables", "fenced_code"]


# the media type of an image by its suffix (the report's video is an animated WebP; older sets' a GIF)
IMAGE_TYPES = {".gif": "image/gif", ".webp": "image/webp", ".png": "image/png"}


def _embedded(doc: Document, base_dir: Path) -> Document:
    """The document with every image that exists inlined as a data URI (the HTML stands alone)."""
    blocks = []
    for b in doc.blocks:
        if isinstance(b, Image) and (base_dir / b.path).is_file():
            data = base64.b64encode((base_dir / b.path).read_bytes()).decode()
            mime = IMAGE_TYPES.get(Path(b.path).suffix.lower(), "image/png")
            b = Image(f"data:{mime};base64,{data}", b.alt, b.caption)
        blocks.append(b)
    return Document(title=doc.title, blocks=blocks)


def to_html(doc: Document, base_dir: str | Path, embed_images: bool = True) -> str:
    """The document's Markdown rendered by Python-Markdown, in a page of its own; images
    embedded as data URIs unless embed_images=False (then linked: the report's HTML sits
    beside its figures/, and the audit zip is the self-contained form)."""
    base_dir = Path(base_dir)
    source = to_markdown(_embedded(doc, base_dir) if embed_images else doc)
    body = markdown.markdown(source, extensions=MARKDOWN_EXTENSIONS, output_format="html")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(unmarkdown(doc.title))}</title><style>{_STYLE}</style></head><body>",
        body,
        "</body></html>",
    ]) + "\n"
