"""Code caches a command inherits (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR,
PYTHONPYCACHEPREFIX, ...). Before: only TORCHINDUCTOR_CACHE_DIR was judged, by `train` on a
GPU alone, after torch's import had made the folder (through another user's link too), by
its name with `..` removed as text, while the kernel walked it through another user's link;
a FIFO there ended in torch's FileExistsError, blamed on --log-dir, train_meta.json left."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import one_line, other_users_link, sacscale
from sacscale.learn import compile_cache
from sacscale.locks import LockSettingError
from sacscale.pipeline.inherited_caches import INHERITED_CODE_CACHES, InheritedCacheError, check_inherited_caches

OTHER = 1001
SRC = Path(__file__).resolve().parents[1] / "src"
TRAIN = ("train", "--devices", "cpu", "--num-envs", "16", "--batch-size", "64", "--iterations", "2",
         "--replay-per-env", "64")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder and links need root")


def _theirs(folder):
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    os.chown(folder, OTHER, OTHER)
    return folder


def _train(tmp_path, variable, value):
    env = dict(os.environ, **{variable: str(value)})
    old = os.environ.copy()
    os.environ.update(env)
    try:
        return sacscale(*TRAIN, "--log-dir", tmp_path / "run")
    finally:
        os.environ.clear()
        os.environ.update(old)


@needs_root
def test_a_fifo_of_another_users_is_refused_before_anything_is_made(tmp_path):
    fifo = _theirs(tmp_path / "eve") / "fifo"
    os.mkfifo(fifo)
    done = _train(tmp_path, "TORCHINDUCTOR_CACHE_DIR", fifo)
    one_line(done, f"sacscale train: error: TORCHINDUCTOR_CACHE_DIR='{fifo}', inherited from the environment: ")
    assert "belongs to uid 1001" in done.stderr and "--log-dir" not in done.stderr
    assert not (tmp_path / "run").exists()


@needs_root
def test_nothing_is_made_through_another_users_link(tmp_path):
    target = tmp_path / "private"
    target.mkdir(mode=0o700)
    link = other_users_link(tmp_path / "shared" / "lnk", target, OTHER)
    done = _train(tmp_path, "TORCHINDUCTOR_CACHE_DIR", link / "by_train")
    one_line(done, f"is reached through {link}, another user's symbolic link (uid {OTHER})")
    assert os.listdir(target) == [] and not (tmp_path / "run").exists()


@needs_root
def test_dot_dot_after_another_users_link_is_judged_as_the_kernel_walks_it(tmp_path, monkeypatch):
    eve = _theirs(tmp_path / "eve")
    (eve / "x" / "y").mkdir(parents=True)
    (eve / "c").symlink_to("x/y")
    os.lchown(eve / "c", OTHER, OTHER)
    (tmp_path / "own").mkdir(mode=0o700)  # what the text names once `..` is removed: ours
    value = f"{eve}/c/../../own"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", value)
    with pytest.raises(InheritedCacheError, match="reached through .*/eve/c, another user.s symbolic link"):
        check_inherited_caches()
    with pytest.raises(LockSettingError, match="reached through .*/eve/c, another user.s symbolic link"):
        compile_cache.check_given_cache()


@needs_root
@pytest.mark.parametrize("variable", ["TRITON_CACHE_DIR", "PYTHONPYCACHEPREFIX", "TORCH_EXTENSIONS_DIR"])
def test_other_code_caches_in_another_users_folder_are_refused(tmp_path, variable):
    cache = _theirs(tmp_path / "eve") / "cache"
    done = _train(tmp_path, variable, cache)
    one_line(done, f"sacscale train: error: {variable}='{cache}', inherited from the environment: ")
    assert not cache.exists() and not (tmp_path / "run").exists()


def test_a_cache_not_made_yet_in_a_folder_anyone_may_write_is_refused_and_not_made(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(shared / "new"))
    with pytest.raises(LockSettingError, match="is not there yet, and .* lets every user make entries"):
        compile_cache.check_given_cache()
    with pytest.raises(InheritedCacheError, match="is not there yet"):
        check_inherited_caches()
    assert not (shared / "new").exists()


def test_a_fifo_of_ones_own_is_no_folder(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "fifo")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "fifo"))
    with pytest.raises(InheritedCacheError, match="is a FIFO, not a folder"):
        check_inherited_caches()
    with pytest.raises(LockSettingError, match="is a FIFO, not a folder"):
        compile_cache.check_given_cache()


def test_caches_of_ones_own_are_kept(tmp_path, monkeypatch):
    for variable in INHERITED_CODE_CACHES:
        (tmp_path / variable).mkdir(mode=0o700)
        monkeypatch.setenv(variable, str(tmp_path / variable))
    check_inherited_caches()
    compile_cache.check_given_cache()
    assert all(stat.S_IMODE(os.stat(tmp_path / v).st_mode) == 0o700 for v in INHERITED_CODE_CACHES)


def test_a_cache_named_through_proc_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRITON_CACHE_DIR", "/proc/self/cwd/cache")
    with pytest.raises(InheritedCacheError, match=r"^TRITON_CACHE_DIR='/proc/self/cwd/cache', inherited from the "
                                                  r"environment: leads through /proc, whose names each process"):
        check_inherited_caches()


def test_triton_home_is_judged_by_its_triton_folder_not_every_entry_below(tmp_path):
    # TRITON_HOME roots Triton's .triton folder as HOME does: what lies deeper elsewhere in it
    # (other users' writable folders, more entries than a walk may take) is no code cache
    home = tmp_path / "home"
    (home / "work" / "shared").mkdir(parents=True)
    (home / "work" / "shared").chmod(0o777)
    check_inherited_caches({"TRITON_HOME": str(home)})
    (home / ".triton").mkdir()
    (home / ".triton").chmod(0o777)
    with pytest.raises(InheritedCacheError, match=r"holds '\.triton', which is writable by other users"):
        check_inherited_caches({"TRITON_HOME": str(home)})


def _run_python(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**env, **(env_extra or {})})


@needs_root
def test_python_option_pycache_prefix_is_judged_as_the_variable(tmp_path):
    cache = _theirs(tmp_path / "eve")
    with pytest.raises(InheritedCacheError, match=r"^-X pycache_prefix='.*/eve', given to Python on its command "
                                                  r"line: .* belongs to uid 1001, .*leave the option out$"):
        check_inherited_caches({}, {"pycache_prefix": str(cache)})
    # `-X pycache_prefix=` clears the variable's prefix: nothing is read from it
    check_inherited_caches({"PYTHONPYCACHEPREFIX": str(cache)}, {"pycache_prefix": ""})
    done = _run_python("-X", f"pycache_prefix={cache}", "-m", "sacscale", "manifest", tmp_path / "none")
    one_line(done, f"sacscale manifest: error: -X pycache_prefix='{cache}', given to Python on its command line: ")


@needs_root
@pytest.mark.parametrize("argv", [("--version",), ("verify", "--help"), ("manifest", "/nonexistent")])
def test_a_bytecode_prefix_of_another_users_is_refused_as_the_package_loads_and_says_what_may_have_run(
        tmp_path, argv):
    cache = _theirs(tmp_path / "eve")
    done = _run_python("-m", "sacscale", *argv, env_extra={"PYTHONPYCACHEPREFIX": str(cache)})
    command = f" {argv[0]}" if not argv[0].startswith("-") else ""
    one_line(done, f"sacscale{command}: error: PYTHONPYCACHEPREFIX='{cache}', inherited from the environment: ")
    assert done.stderr.rstrip().endswith("bytecode put there may already have run as you"), done.stderr
    assert "sacscale 0.1.0" not in done.stdout


@needs_root
def test_a_code_cache_is_judged_whatever_imports_the_package(tmp_path):
    cache = _theirs(tmp_path / "eve")
    done = _run_python("-c", "import sacscale.usage", env_extra={"TRITON_CACHE_DIR": str(cache)})
    one_line(done, f"sacscale: error: TRITON_CACHE_DIR='{cache}', inherited from the environment: ")
    assert "may already have run" not in done.stderr  # Triton has loaded nothing yet


def test_a_cache_below_a_file_can_never_be_made_and_is_refused(tmp_path):
    (tmp_path / "notes").write_text("")
    with pytest.raises(InheritedCacheError, match=r"TRITON_CACHE_DIR='.*/notes/cache', inherited from the environment: "
                                                  r"cannot be made: '.*/notes' is a plain file, not a folder; "):
        check_inherited_caches({"TRITON_CACHE_DIR": str(tmp_path / "notes" / "cache")})
    check_inherited_caches({"TRITON_CACHE_DIR": str(tmp_path / "new" / "cache")})  # made in a folder of one's own


def test_a_spawned_child_is_not_judged_again(tmp_path):
    # a collector or spawned rank inherits the environment its parent judged (plus the private
    # compile cache the trainer made): it neither refuses nor loads the planner's rules
    os.mkfifo(tmp_path / "fifo")
    script = tmp_path / "spawn_child.py"
    script.write_text(
        "import multiprocessing, sys\n"
        "def child(queue):\n"
        "    import sacscale  # noqa: F401\n"
        "    queue.put('sacscale.pipeline.code_paths_env' in sys.modules)\n"
        "if __name__ == '__main__':\n"
        "    context = multiprocessing.get_context('spawn')\n"
        "    queue = context.Queue()\n"
        "    process = context.Process(target=child, args=(queue,))\n"
        "    process.start()\n"
        "    print(queue.get(timeout=60))\n"
        "    process.join()\n")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "fifo"), PYTHONPATH=str(SRC))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=180)
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
