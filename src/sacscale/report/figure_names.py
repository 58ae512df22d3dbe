"""The report's figures by name and file: what the workflow declares as the report rule's
outputs, in a module of its own so that Snakemake's start imports no plotting library."""

FIGURES = {
    "throughput_by_repeat": "throughput_by_repeat.png",
    "scaling_bars": "scaling_bars.png",
    "cumulative_steps": "cumulative_steps.png",
    "return_vs_time": "return_vs_time.png",
    "phase_times": "phase_times.png",
    "learning_curves": "learning_curves.png",
}

# Each figure carries the name it was drawn as, in a PNG text chunk: a figure swapped with
# another figure of the set (both pages then show it under the other's caption) is named
# by verify. The report is written after the manifest, so no hashed record can bind them.
NAME_KEY = b"sacscale-figure"
# ... and what drew it (matplotlib's version, a hash of the drawing code), so that a figure
# verify cannot draw again pixel for pixel says whether other code drew it.
DRAWN_WITH_KEY = b"sacscale-drawn-with"
_PNG = b"\x89PNG\r\n\x1a\n"


def png_texts(path) -> dict[bytes, str]:
    """The text chunks of a PNG before its image data (bounded: 64 chunks of at most 4 KB
    each); {} for a file that is no PNG."""
    texts = {}
    with open(path, "rb") as fh:
        if fh.read(8) != _PNG:
            return texts
        for _ in range(64):
            head = fh.read(8)
            if len(head) < 8 or head[4:] in (b"IDAT", b"IEND"):
                break
            length = int.from_bytes(head[:4], "big")
            if head[4:] != b"tEXt" or length > 4096:
                fh.seek(length + 4, 1)
                continue
            key, _, value = fh.read(length).partition(b"\0")
            fh.seek(4, 1)
            texts.setdefault(key, value.decode("latin-1"))
    return texts


def drawn_as(path) -> str | None:
    """The name a PNG figure was drawn as (its `sacscale-figure` text chunk), or None when
    it has none or is no PNG."""
    return png_texts(path).get(NAME_KEY)


def drawn_with(path) -> str | None:
    """What drew a PNG figure (its `sacscale-drawn-with` chunk), or None (none recorded)."""
    return png_texts(path).get(DRAWN_WITH_KEY)


# chunks that hold the image, its palette and transparency (the pixels compare them) or text
_IMAGE_CHUNKS = {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND", b"tEXt", b"zTXt", b"iTXt"}


def display_chunks(path) -> list[tuple[bytes, int]] | None:
    """The chunks of a PNG that change how a browser shows its pixels (gamma, colour profile,
    animation frames, orientation, ...), as (type, CRC); None for a file that is no PNG.
    Bounded: at most 100,000 chunks, and no chunk's data is read."""
    chunks = []
    with open(path, "rb") as fh:
        if fh.read(8) != _PNG:
            return None
        for _ in range(100_000):
            head = fh.read(8)
            if len(head) < 8 or head[4:] == b"IEND":
                break
            fh.seek(int.from_bytes(head[:4], "big"), 1)
            crc = fh.read(4)
            if head[4:] not in _IMAGE_CHUNKS:
                chunks.append((head[4:], int.from_bytes(crc, "big")))
    return chunks
