"""The commands behave the same under `python -O` / `-OO` (a run's env may set
PYTHONOPTIMIZE, which planning accepts): `-OO` drops docstrings, and every command died
with `AttributeError: 'NoneType' object has no attribute 'splitlines'` (the parser's
description was the module's docstring); `-O` drops asserts, so no check may be one."""

import ast
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sacscale"

EVERY_HELP = """
import contextlib, io, sys
from sacscale import cli
from sacscale.evidence import status
from sacscale.pipeline import run_record
for main, argv in [(cli.main, ["--help"]), *((cli.main, [c, "--help"]) for c in cli.COMMANDS),
                   (status.main, ["--help"]), (run_record.main, ["--help"])]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            main(argv)
    except SystemExit as exc:
        assert exc.code == 0, (argv, exc.code)
    assert out.getvalue().startswith("usage: "), (argv, out.getvalue()[:200])
print("ok", len(cli.COMMANDS))
"""


def optimized(*args, level="2"):
    env = {**os.environ, "PYTHONOPTIMIZE": level}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env)


def test_sacscale_help_runs_with_docstrings_dropped():
    done = optimized("-m", "sacscale", "--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "The one entry point: `sacscale <command> ...`." in done.stdout, done.stdout


def test_every_command_parser_is_built_with_docstrings_dropped():
    done = optimized("-c", EVERY_HELP)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok "), done.stdout


def _uses(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            yield node.lineno, "an assert (dropped by -O)"
        elif isinstance(node, ast.Name) and node.id == "__doc__":
            yield node.lineno, "__doc__ (None under -OO)"


def test_no_check_in_the_source_depends_on_asserts_or_docstrings():
    found = [f"{path.relative_to(SRC)}:{line}: {what}" for path in sorted(SRC.rglob("*.py"))
             for line, what in _uses(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []
