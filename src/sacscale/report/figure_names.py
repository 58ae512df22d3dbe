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
_PNG = b"\x89PNG\r\n\x1a\n"


def drawn_as(path) -> str | None:
    """The name a PNG figure was drawn as (its `sacscale-figure` text chunk), or None when
    it has none or is no PNG. Reads the chunks before the image data only, bounded."""
    with open(path, "rb") as fh:
        if fh.read(8) != _PNG:
            return None
        for _ in range(64):
            head = fh.read(8)
            if len(head) < 8 or head[4:] in (b"IDAT", b"IEND"):
                return None
            length = int.from_bytes(head[:4], "big")
            if head[4:] != b"tEXt" or length > 4096:
                fh.seek(length + 4, 1)
                continue
            key, _, value = fh.read(length).partition(b"\0")
            fh.seek(4, 1)
            if key == NAME_KEY:
                return value.decode("latin-1")
    return None
