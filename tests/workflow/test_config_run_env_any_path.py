"""Every path a run environment names is judged, whatever its variable. Before: only a list
of variables was (PATH, PYTHONPATH, the kernel caches, ...), so `env: {CXX: /home/eve/g++}`
planned, and torch.compile ran eve's script as its compiler as root; HOME (the default
kernel caches), TRITON_HOME, NCCL_NET_PLUGIN (a library NCCL loads), TORCH_EXTENSIONS_DIR
planned too. Now a value that names a path (absolute, `~`, a ':' list, a command's word, an
option's `=path`) is judged as the list's were; a value naming none is not."""

import glob
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from cli_runs import other_users_link
from sacscale.pipeline.code_paths_env import READS_WHAT_IT_NAMES, check_code_paths, named_paths
from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_defaults.env"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
TAIL = "so that user's code would run in the run: name a folder of your own"


def refused(env) -> str:
    with pytest.raises(PlanError) as info:
        resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)
    return str(info.value)


@pytest.fixture
def open_folder(tmp_path):
    path = tmp_path / "open"
    path.mkdir()
    path.chmod(0o777)
    return path


@AS_ROOT
def test_a_compiler_in_another_users_folder_is_refused(tmp_path):
    eve = tmp_path / "eve"
    eve.mkdir(mode=0o755)
    os.chown(eve, 1001, 1001)
    assert refused({"CXX": str(eve / "g++")}) == (
        f"{WHERE}: CXX: '{eve / 'g++'}' is inside {eve}, which belongs to uid 1001, another user; torch.compile "
        f"starts it as its C++ compiler, {TAIL}")
    assert refused({"HOME": str(eve)}) == (
        f"{WHERE}: HOME: '{eve}' belongs to uid 1001, another user; libraries keep their default caches under it, "
        f"compiled kernels among them, {TAIL}")


@pytest.mark.parametrize("name", ["NCCL_NET_PLUGIN", "TRITON_DUMP_DIR", "XDG_CONFIG_HOME", "GCONV_PATH", "BASH_ENV",
                                  "ANY_VARIABLE"])
def test_any_variable_naming_a_path_others_may_change_is_refused(open_folder, name):
    assert refused({name: str(open_folder / "lib.so")}) == (
        f"{WHERE}: {name}: '{open_folder / 'lib.so'}' is inside {open_folder}, which is writable by other users "
        f"without the sticky bit (mode 0777); {READS_WHAT_IT_NAMES}, {TAIL}")


@pytest.mark.parametrize("form", ["/usr/lib:{}", "ccache {}", "--plugin={}", "-I{}", "file://{}", "-O2 {} -g"])
def test_a_path_inside_a_value_is_judged(open_folder, form):
    assert refused({"CC": form.format(open_folder / "x")}).startswith(
        f"{WHERE}: CC: '{open_folder / 'x'}' is inside {open_folder}, which is writable by other users")


def test_a_home_path_is_judged_by_the_home_the_run_gets(open_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(open_folder))  # snakemake's, which the run inherits
    assert refused({"TORCH_EXTENSIONS_DIR": "~/ext"}).startswith(
        f"{WHERE}: TORCH_EXTENSIONS_DIR: '{open_folder / 'ext'}' is inside {open_folder}, which is writable")
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    env = {"HOME": str(mine), "TORCH_EXTENSIONS_DIR": "~/ext"}  # the run's own HOME: ~ is in it
    check_code_paths(env, WHERE)


def test_values_naming_no_path_are_not_judged(tmp_path):
    mine = tmp_path / "my folder"  # blanks in a path that is there: judged whole
    mine.mkdir(mode=0o700)
    env = {"NCCL_DEBUG": "INFO", "NCCL_P2P_DISABLE": "0", "NCCL_SOCKET_IFNAME": "^lo,docker0", "X": "0,1",
           "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "COMPILER": "g++", "NOBODY": "~nosuchuser22/x",
           "MINE": str(mine), "MY_CC": f"ccache {shutil.which('sh')}", "EMPTY": ""}
    check_code_paths(env, WHERE)
    assert named_paths(env["NCCL_SOCKET_IFNAME"]) == named_paths("0,1") == named_paths("") == []
    assert named_paths(str(mine)) == [str(mine)]


def test_every_presets_env_still_plans():
    for name, preset in PRESETS["presets"].items():
        defaults = (preset.get("run_defaults") or {}).get("env") or {}
        for config, entry in (preset.get("run_configs") or {"run_defaults": {}}).items():
            check_code_paths({**defaults, **(entry.get("env") or {})}, f"{name}.{config}")


@pytest.mark.parametrize("plan", sorted(glob.glob(str(REPO / "results" / "*" / "plan.json"))))
def test_every_committed_sets_run_env_still_plans(plan):
    configs = json.loads(Path(plan).read_text())["run_configs"]
    for config in configs.values() if isinstance(configs, dict) else configs:
        check_code_paths({k: str(v) for k, v in (config.get("env") or {}).items()}, plan)


@AS_ROOT
def test_dot_dot_after_ones_own_link_into_another_users_folder_is_refused(tmp_path):
    """`..` is taken by the kernel after the link (into the link target's parent), not as
    text: `lk/../evil/g++` with `lk` one's own link into another user's folder is theirs."""
    eve = tmp_path / "eve"
    (eve / "sub").mkdir(parents=True, mode=0o755)
    (eve / "evil").mkdir(mode=0o755)
    for folder in (eve, eve / "sub", eve / "evil"):
        os.chown(folder, 1001, 1001)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    (mine / "lk").symlink_to(eve / "sub")
    says = refused({"CXX": f"{mine}/lk/../evil/g++"})
    assert says.startswith(f"{WHERE}: CXX: '{mine}/lk/../evil/g++' leads to {eve / 'evil' / 'g++'}, inside "
                           f"{eve}, which belongs to uid 1001, another user; "), says
    assert says.endswith(TAIL), says


def _theirs_and_mine(tmp_path):
    """eve's folder (uid 1001) and one of ours beside it, with a lib/ of ours."""
    eve, mine = tmp_path / "eve", tmp_path / "mine"
    eve.mkdir(mode=0o755)
    os.chown(eve, 1001, 1001)
    (mine / "lib").mkdir(parents=True, mode=0o755)
    mine.chmod(0o755)
    return eve, mine


@AS_ROOT
@pytest.mark.parametrize("name, form", [("LD_LIBRARY_PATH", "{}"), ("LD_LIBRARY_PATH", "/usr/lib:{}"),
                                        ("PATH", "/usr/bin:{}"), ("LD_RUN_PATH", "{}"), ("CPATH", "{}"),
                                        ("CFLAGS", "-O2 -I{}")])
def test_a_path_through_another_users_folder_left_by_dot_dot_is_refused(tmp_path, name, form):
    """The loader walks `eve/../mine/lib` as written: it enters eve's folder, which she may
    rename and put a link of hers at (after planning too); judged at `mine/lib` alone, it passed."""
    eve, mine = _theirs_and_mine(tmp_path)
    written = f"{eve}/../mine/lib"
    says = refused({name: form.format(written)})
    assert says.startswith(f"{WHERE}: {name}: '{written}' is reached through {eve}, which belongs to uid 1001, "
                           "another user; "), says
    assert says.endswith(TAIL), says
    check_code_paths({name: form.format(mine / "lib")}, WHERE)  # named directly: ours


@AS_ROOT
def test_a_path_through_another_users_link_left_by_dot_dot_is_refused(tmp_path):
    _, mine = _theirs_and_mine(tmp_path)
    sticky = tmp_path / "sticky"
    link = other_users_link(sticky / "eve", mine / "lib")  # eve/.. is mine while her link stays
    written = f"{link}/../lib"
    assert refused({"LD_LIBRARY_PATH": written}).startswith(
        f"{WHERE}: LD_LIBRARY_PATH: '{written}' is reached through {link}, another user's symbolic link (uid 1001)")


@AS_ROOT
def test_dot_dot_after_a_link_names_the_folder_the_walk_entered(tmp_path):
    """`mine/toeve/..` with `toeve` one's own link into eve's folder is eve's folder: named
    so, not `mine` (the text's folder, this user's own), where nothing there exists yet too."""
    eve = tmp_path / "eve"
    (eve / "d").mkdir(parents=True, mode=0o755)
    for folder in (eve, eve / "d"):
        os.chown(folder, 1001, 1001)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    (mine / "toeve").symlink_to(eve / "d")
    written = f"{mine}/toeve/../lib/x.so"
    says = refused({"ANY_VARIABLE": written})
    assert says.startswith(f"{WHERE}: ANY_VARIABLE: '{written}' leads to {eve / 'lib' / 'x.so'}, inside {eve}, "
                           "which belongs to uid 1001, another user; "), says
    assert str(mine) + "," not in says
