"""A relative path in a run env is judged where the run starts it. Before: `_as_path` gave
None for it, so `env: {CXX: "../../home/eve/evil/g++"}` planned, though record-run starts
the trainer in Snakemake's working folder (where planning runs), from which torch.compile
ran eve's script as its compiler. Now a value with a `/` (`./x`, `../x`, `a/b`) is joined to
the planning process's working folder and judged as an absolute one; a bare word (`g++`,
`INFO`) is not a path."""

import os
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.code_paths_env import READS_WHAT_IT_NAMES, check_code_paths, named_paths
from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
TAIL = "so that user's code would run in the run: name a folder of your own"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")


def refused(config_env) -> str:
    config = {"preset": "cpu", "run_configs": {"n1_cpu": {"env": config_env}}}
    with pytest.raises(PlanError) as info:
        resolve(config, PRESETS, CPU_BOX)
    return str(info.value)


@AS_ROOT
def test_a_relative_compiler_in_another_users_folder_is_refused(tmp_path, monkeypatch):
    eve = tmp_path / "home" / "eve"
    eve.mkdir(parents=True, mode=0o755)
    os.chown(eve, 1001, 1001)
    checkout = tmp_path / "work" / "check"
    checkout.mkdir(parents=True)
    monkeypatch.chdir(checkout)  # snakemake's working folder, where the trainer starts
    assert refused({"CXX": "../../home/eve/evil/g++"}) == (
        f"run_configs.n1_cpu.env: CXX: '{checkout}/../../home/eve/evil/g++' is inside {eve}, which belongs to "
        f"uid 1001, another user; torch.compile starts it as its C++ compiler, {TAIL}")


@pytest.mark.parametrize("form", ["./open/x", "open/x", "ccache ./open/x", "-I./open/x", "--plugin=open/x",
                                  "/usr/lib:open/x"])
def test_a_relative_path_is_judged_from_the_runs_folder(tmp_path, monkeypatch, form):
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    monkeypatch.chdir(tmp_path)
    shown = form.rpartition(" ")[2].rpartition("=")[2].rpartition(":")[2].removeprefix("-I")
    assert refused({"ANY_VARIABLE": form}) == (
        f"run_configs.n1_cpu.env: ANY_VARIABLE: '{tmp_path}/{shown}' is inside {tmp_path / 'open'}, which is "
        f"writable by other users without the sticky bit (mode 0777); {READS_WHAT_IT_NAMES}, {TAIL}")


def test_a_bare_word_is_not_a_path_and_ones_own_relative_path_plans(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir(mode=0o700)
    monkeypatch.chdir(tmp_path)
    assert named_paths("g++") == named_paths("INFO") == named_paths("ccache g++ -O2") == []
    assert named_paths("../x", start="/a/b") == ["/a/b/../x"]
    check_code_paths({"CXX": "g++", "CC": "./mine/cc", "TORCH_EXTENSIONS_DIR": "mine/ext"}, "env")


def test_the_schema_says_relative_paths_are_judged():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    text = schema["$defs"]["run_fields"]["properties"]["env"]["description"]
    assert "relative paths and values that name none" not in text
    assert "a relative one (./x, ../x, a/b) from the folder the run starts in" in text
