"""The dynamic loader's tokens in a run env: glibc replaces `$ORIGIN` (`${ORIGIN}`), `$LIB`
and `$PLATFORM` in LD_LIBRARY_PATH and in a library's run path by values of each program it
loads (`$ORIGIN`: the program's own folder). Before: `LD_LIBRARY_PATH:
'$ORIGIN/../../../../../home/eve/lib'` was judged as a folder named `$ORIGIN` in the start
folder, so from a checkout deep enough it planned, while the loader took it from the Python
binary's folder and the trainer loaded another user's libpython as root. Now such a token
is refused, naming the variable and the token; and the path-only variables torch and Triton
read (TRITON_PTXAS_PATH, PYTORCH_KERNEL_CACHE_PATH, ...) take a bare word as a path."""

import os

import pytest
from run_env_plans import WHERE, plan, refused

from sacscale.pipeline.code_paths_env import CODE_PATH_ENV, PATH_VALUE_ENV

TAIL = "which planning cannot judge; name the folder itself"
ORIGIN = f"the loader replaces it with each program's folder, {TAIL}"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")


def test_origin_in_ld_library_path_is_refused_from_a_deep_checkout(tmp_path, monkeypatch):
    """The pass's shape: from a start folder deep enough, the `..`s stayed inside it."""
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "repo"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    value = "$ORIGIN/../../../../../home/eve/lib"
    assert refused({"LD_LIBRARY_PATH": value}) == f"{WHERE}: LD_LIBRARY_PATH: $ORIGIN in {value!r}: {ORIGIN}"


@pytest.mark.parametrize("value, token, what", [
    ("/usr/lib:${ORIGIN}/lib", "${ORIGIN}", "each program's folder"),
    ("/opt/$LIB", "$LIB", "a library folder name of its own choosing (lib, lib64, lib/x86_64-linux-gnu)"),
    ("/opt/${PLATFORM}/x", "${PLATFORM}", "the processor's platform name (x86_64, haswell)"),
])
def test_each_loader_token_in_ld_library_path_is_refused(tmp_path, monkeypatch, value, token, what):
    monkeypatch.chdir(tmp_path)
    assert refused({"LD_LIBRARY_PATH": value}) == (
        f"{WHERE}: LD_LIBRARY_PATH: {token} in {value!r}: the loader replaces it with {what}, {TAIL}")


@pytest.mark.parametrize("name, value, text", [
    ("LDFLAGS", "-O2 -Wl,-rpath,$ORIGIN/../lib", "$ORIGIN/../lib"),
    ("CFLAGS", "-Wl,--rpath=$ORIGIN", "$ORIGIN"),
    ("CC", "gcc -Xlinker -rpath -Xlinker $ORIGIN/x", "$ORIGIN/x"),
    ("CXX", "g++ -Wl,-R$ORIGIN", "$ORIGIN"),
])
def test_origin_in_a_run_path_handed_to_the_linker_is_refused(tmp_path, monkeypatch, name, value, text):
    monkeypatch.chdir(tmp_path)
    assert refused({name: value}) == f"{WHERE}: {name}: $ORIGIN in {text!r}: {ORIGIN}"


def test_words_that_are_no_loader_token_still_plan(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir(mode=0o700)
    monkeypatch.chdir(tmp_path)
    env = {"LD_LIBRARY_PATH": "mine:/usr/lib", "MY_NOTE": "$ORIGIN", "CFLAGS": "-DX=$LIBRARY -O2"}
    assert plan(env).run_configs["n1_cpu"].env == env


@AS_ROOT
@pytest.mark.parametrize("name", ["TRITON_PTXAS_PATH", "PYTORCH_KERNEL_CACHE_PATH", "TRITON_LIBCUDA_PATH",
                                  "TRITON_CUDART_PATH", "TRITON_DUMP_DIR"])
def test_a_bare_word_in_a_torch_or_triton_path_variable_is_judged_as_a_path(tmp_path, monkeypatch, name):
    """Triton runs the file TRITON_PTXAS_PATH names, torch loads kernels from the folder
    PYTORCH_KERNEL_CACHE_PATH names: a bare word there is a file in the start folder."""
    evecode = tmp_path / "evecode"
    evecode.mkdir()
    os.chown(evecode, 1001, 1001)
    monkeypatch.chdir(tmp_path)
    assert name in PATH_VALUE_ENV
    what = CODE_PATH_ENV.get(name, "the run reads or runs what it names")
    assert refused({name: "evecode"}) == (
        f"{WHERE}: {name}: '{evecode}' belongs to uid 1001, another user; {what}, so that user's code would run in "
        "the run: name a folder of your own")


@pytest.mark.parametrize("value", ["$ORIGIN/../../../../../../home/eve/lib", "/opt/x:${ORIGIN}/lib", "/opt/$LIB"])
def test_a_token_in_ld_run_path_is_refused(tmp_path, monkeypatch, value):
    """ld writes LD_RUN_PATH, tokens and all, into the libraries it links (torch.compile and
    Triton link theirs): before, it was judged as a folder named `$ORIGIN` in the start folder."""
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "repo"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    token = next(t for t in ("${ORIGIN}", "$ORIGIN", "$LIB") if t in value)
    assert refused({"LD_RUN_PATH": value}).startswith(f"{WHERE}: LD_RUN_PATH: {token} in {value!r}: the loader ")
