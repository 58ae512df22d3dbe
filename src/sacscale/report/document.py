"""A small document model written out as Markdown and as self-contained HTML.

The report is built once as a list of blocks and rendered twice, so the Markdown and
the HTML always say the same thing. Inline text uses a tiny subset of Markdown:
`code` spans only; everything else is literal (and escaped in HTML).
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path


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
    path: str                        # relative to the report's directory
    alt: str
    caption: str = ""


@dataclass
class Code:
    text: str


@dataclass
class Raw:
    """Markdown copied verbatim (e.g. docs/deviations.md); shown preformatted in HTML."""
    markdown: str


@dataclass
class Document:
    title: str
    blocks: list = field(default_factory=list)

    def add(self, *blocks) -> "Document":
        self.blocks.extend(blocks)
        return self


_CODE = re.compile(r"`([^`]+)`")


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


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
            out += [f"![{b.alt}]({b.path})", ""]
            if b.caption:
                out += [f"*{b.caption}*", ""]
        elif isinstance(b, Code):
            out += ["```", b.text.rstrip("\n"), "```", ""]
        elif isinstance(b, Raw):
            out += [b.markdown.rstrip("\n"), ""]
        else:
            raise TypeError(f"unknown block {b!r}")
    return "\n".join(out).rstrip("\n") + "\n"


def block_markdown(block) -> str:
    """One block's Markdown, exactly as `to_markdown` writes it inside a document."""
    return to_markdown(Document(title="", blocks=[block])).split("\n", 2)[2]


def _inline_html(text: str) -> str:
    parts = _CODE.split(str(text))
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(parts))


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 68rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.6rem; }
th { background: #eee; }
td.r { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f5f5f5; padding: 0.6rem; overflow-x: auto; }
figure { margin: 1rem 0; } figure img { max-width: 100%; }
figcaption, .caption { color: #444; font-style: italic; }
"""


def to_html(doc: Document, base_dir: str | Path, embed_images: bool = True) -> str:
    """HTML; images embedded as data URIs (the file stands alone) unless embed_images=False."""
    base_dir = Path(base_dir)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(doc.title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(doc.title)}</h1>",
    ]
    for b in doc.blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{_inline_html(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            out.append(f"<p>{_inline_html(b.text)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            align = b.align or ["l"] * len(b.header)
            head = "".join(f"<th>{_inline_html(h)}</th>" for h in b.header)
            body = "".join(
                "<tr>" + "".join(f'<td class="{a}">{_inline_html(c)}</td>' for a, c in zip(align, row)) + "</tr>"
                for row in b.rows
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            if b.caption:
                out.append(f'<p class="caption">{_inline_html(b.caption)}</p>')
        elif isinstance(b, Image):
            src = html.escape(b.path)
            if embed_images and (base_dir / b.path).is_file():
                data = base64.b64encode((base_dir / b.path).read_bytes()).decode()
                src = f"data:image/png;base64,{data}"
            cap = f"<figcaption>{_inline_html(b.caption)}</figcaption>" if b.caption else ""
            out.append(f'<figure><img src="{src}" alt="{html.escape(b.alt)}">{cap}</figure>')
        elif isinstance(b, Code):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
        elif isinstance(b, Raw):
            out.append(f"<pre>{html.escape(b.markdown)}</pre>")
        else:
            raise TypeError(f"unknown block {b!r}")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
