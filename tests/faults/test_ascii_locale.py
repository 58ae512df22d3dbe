"""Commands under a locale whose encoding is ASCII (LC_ALL=C with Python's UTF-8 mode and
locale coercion off, as on some batch nodes): the status summary's `--check` of README.md
failed (`'ascii' codec can't decode byte 0xe2`) although the block was current, because
files were read in the locale's encoding. Every file the code reads or writes as text is
UTF-8 now, whatever the locale says (docs/faults.md row 28)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def run(args, cwd=REPO):
    env = {**os.environ, **ASCII_LOCALE, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          errors="replace", timeout=300)


def test_the_locale_is_ascii_there():
    done = run(["-c", "import locale; print(locale.getpreferredencoding(False))"])
    assert done.stdout.strip() in ("ANSI_X3.4-1968", "ascii", "US-ASCII"), done.stdout


def test_the_status_check_of_a_utf8_readme_passes(tmp_path):
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    assert "\u00b1" in readme.read_text(encoding="utf-8") or any(ord(c) > 127 for c in readme.read_text(
        encoding="utf-8")), "the README holds non-ASCII text (the case)"
    done = run(["-m", "sacscale.evidence.status", "--root", str(REPO), "--check", str(readme)])
    assert done.returncode == 0, done.stderr
    before = readme.read_bytes()
    done = run(["-m", "sacscale.evidence.status", "--root", str(REPO), "--write", str(readme)])
    assert done.returncode == 0, done.stderr
    assert readme.read_bytes() == before
