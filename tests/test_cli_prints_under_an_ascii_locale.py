"""Printed text the stream's encoding cannot hold, under an ASCII locale (LC_ALL=C with
locale coercion and UTF-8 mode off): prepare-model wrote its .mjb and model.json, then died
printing its summary line (`UnicodeEncodeError ... '\\u2026'`, rc 1), leaving both outputs.
Now the CLI's streams (and a spawned rank's or collector's) write such a character as an
escape: no printed character fails a command after its work."""

import io
import os
import subprocess
import sys
from pathlib import Path

from sacscale.cli import _Inert
from tests.test_cli_paths_under_an_ascii_locale import ASCII_LOCALE

SRC = Path(__file__).resolve().parents[1] / "src"


def under_ascii_locale(*argv) -> subprocess.CompletedProcess:
    env = {**os.environ, **ASCII_LOCALE, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, *argv], capture_output=True, env=env, timeout=300)


def test_prepare_model_prints_its_summary_and_succeeds(tmp_path):
    out = tmp_path / "pm"
    done = under_ascii_locale("-m", "sacscale", "prepare-model", "--output-dir", str(out), "--num-envs", "2",
                              "--steps", "2")
    assert done.returncode == 0, done.stderr
    line, = done.stdout.decode("ascii").splitlines()
    assert line.startswith(f"{out / 'g1_walk_flat.mjb'} sha256 ") and "\\u2026 nq=36 nv=35 nu=29" in line, line
    assert (out / "model.json").is_file()


def test_a_spawned_process_escapes_what_its_stdout_cannot_hold():
    done = under_ascii_locale("-c", "from sacscale.usage import escape_what_the_encoding_cannot_hold as e; e(); "
                                    "print('x \\u2026 \\u00b1 \\u2192')")
    assert done.returncode == 0 and done.stdout == b"x \\u2026 \\xb1 \\u2192\n", done.stderr


def test_the_cli_stream_writes_what_an_ascii_stream_cannot_hold_as_escapes():
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    _Inert(stream).write("sha256 0123\u2026 \u00d7 \u2265 \udcff\x1b[2J\n")
    assert raw.getvalue() == b"sha256 0123\\u2026 \\xd7 \\u2265 \\xff\\x1b[2J\n"
