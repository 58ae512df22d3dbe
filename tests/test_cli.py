"""The `sacscale` command line: a version, help for every option, the choices listed, exit
status 2 for every usage or input error, and a hint where a default path needs the
repository root."""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys

import pytest

from sacscale import __version__
from sacscale.cli import COMMANDS, main


def _parser(name: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"sacscale {name}", allow_abbrev=False)
    importlib.import_module(f"sacscale.commands.{COMMANDS[name][0]}").add_arguments(parser)
    return parser


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"sacscale {__version__}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help(name):
    missing = []
    for action in _parser(name)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        # a bare "(default: X)" is no help
        text = re.sub(r"\(default:? [^)]*\)", "", action.help or "").strip()
        if not text or action.help == argparse.SUPPRESS:
            missing.append("/".join(action.option_strings) or action.dest)
    assert not missing, f"sacscale {name}: options without help: {missing}"


def test_train_help_lists_the_choices(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for listed in ("--env-pipeline {halves,serial}", "--tilt-obs {world,torso}", "--grad-sync {auto,on,off}",
                   "--allreduce {in-graph,between-graphs}"):
        assert listed in out
    assert "--num-critic-updates" in out and "critic updates per iteration" in out
    assert "--num-actor-updates" in out and "actor updates per iteration" in out


def test_top_level_help_names_exit_statuses_and_the_repository_root(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "2 a usage error" in out and "No Snakefile found" in out and "--version" in out


@pytest.mark.parametrize("argv", [
    [],
    ["no-such-command"],
    ["train", "--no-such-option"],
    ["train", "--num-envs", "many"],
    ["train", "--env-pipeline", "thirds"],
    ["analyze-run"],  # a required argument missing
])
def test_argparse_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


@pytest.mark.parametrize("argv, message", [
    (["train", "--num-envs", "0"], "--num-envs must be positive"),
    (["train", "--devices", "cpu", "--collector-cpu-ids", "0;1"], "2 CPU list(s) given for 1 rank(s)"),
    (["probe", "correctness", "--devices", "gpu0"], "'gpu0' is neither 'cpu' nor a CUDA device index"),
    (["train-reference", "--devices", "zero"], "--devices zero: CUDA device indices"),
    (["learner-bench", "--extra", '{"no_such_setting": 1}'], "--extra:"),
])
def test_bad_values_exit_2(tmp_path, capsys, argv, message):
    extra = [] if argv[0] in ("learner-bench",) else ["--output" if argv[0] == "probe" else "--log-dir",
                                                      str(tmp_path / "out")]
    assert main([*argv, *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_malformed_json_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["learner-bench", "--extra", "[1, 2]"])
    assert exc.value.code == 2
    assert "not a JSON object" in capsys.readouterr().err


def test_outside_the_repository_a_default_path_gets_a_hint(tmp_path):
    """The reference environment's default paths are relative to the repository root."""
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "reference-env", "--output", "ref.json"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "relative to the repository root, the directory with the Snakefile" in proc.stderr
    assert not (tmp_path / "ref.json").exists()
