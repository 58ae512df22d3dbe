"""The trainer's output as the run wrapper (sacscale.pipeline.run_record) reads it while it
runs: short progress lines for the terminal, with the phase (collecting, learning) named."""

from __future__ import annotations

import codecs
import re
import sys
import time

from sacscale.train import FIRST_UPDATE_DONE

# A tqdm status line, e.g. "train:  42%|####2     | 10/24 [00:05<00:07,  1.90it/s, fps=1,234, ret=0.12]"
_BAR = re.compile(r"(\d+)/(\d+) \[[0-9:]+<([0-9:?]+)")
_FPS = re.compile(r"fps=([0-9](?:[0-9,.]*[0-9])?)")
_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# The trainer's line after its first learner update (sacscale.train.FIRST_UPDATE_DONE)
_FIRST_UPDATE = re.compile(rf"rank \d+: ({re.escape(FIRST_UPDATE_DONE)} at iteration (\d+).*)$")


class ProgressEcho:
    """Reads the trainer's output and writes one short line for the terminal when its
    progress bar has moved `every_it` iterations (0: a tenth of the run) or `every_s`
    seconds since the last line, and at the last iteration.

    With `phases` (our trainer, which prints FIRST_UPDATE_DONE) each line names the phase:
    before the first learner update the iterations only collect (no learner work, so far
    more env steps/s), after it they learn; the first update itself is echoed as the
    line between them."""

    def __init__(self, label: str, every_it: int, every_s: float, out=None, clock=time.monotonic,
                 phases: bool = False):
        self.label, self.every_it, self.every_s = label, every_it, every_s
        self.out, self.clock = out, clock
        self.phases = phases
        self.learning_from: int | None = None  # the first iteration with a learner update (1-based)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a bar's blocks are multi-byte
        self.pending = ""
        self.shown_it, self.shown_t = 0, clock()

    def feed(self, chunk: bytes) -> None:
        self.pending += self.decoder.decode(chunk)
        *segments, self.pending = re.split(r"[\r\n]", self.pending)
        self.pending = self.pending[-65536:]  # a line without an end is not a status line
        for segment in segments:
            self._segment(_ESCAPE.sub("", segment))

    def _segment(self, text: str) -> None:
        first = _FIRST_UPDATE.search(text) if self.phases and self.learning_from is None else None
        if first:  # the first rank's line; the other ranks' say the same
            self.learning_from = int(first.group(2))
            self._print(f"{self.label}: {first.group(1)}")
            return
        bar = _BAR.search(text)
        if bar is None:
            return
        it, total, eta = int(bar.group(1)), int(bar.group(2)), bar.group(3)
        if it <= self.shown_it:
            return
        now = self.clock()
        every = self.every_it or max(1, total // 10)
        if it < total and it - self.shown_it < every and now - self.shown_t < self.every_s:
            return
        self.shown_it, self.shown_t = it, now
        fps = _FPS.search(text)
        rate = f", {fps.group(1)} env steps/s" if fps else ""
        # the bar counts completed iterations: the first update's iteration completes at its count
        learning = self.learning_from is not None and it >= self.learning_from
        phase = "" if not self.phases else " (learning)" if learning else " (collecting; learning not started)"
        self._print(f"{self.label}: iteration {it}/{total}{phase}{rate}, ETA {eta if it < total else '00:00'}")

    def _print(self, line: str) -> None:
        try:
            print(line, file=self.out or sys.stderr, flush=True)
        except OSError:
            pass
