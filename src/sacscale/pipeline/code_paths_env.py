"""The paths a run configuration's environment names: where its processes take code from
(modules, shared libraries, the compilers torch.compile and Triton start, the caches of
compiled kernels and bytecode they load again) and whatever else they read or write. A path
in a folder another user owns or may write lets that user put their code into the run, as
LD_PRELOAD would (refused outright by interpreter_env; a temporary folder is judged by
temporary_env). Every value that names a path is judged, whatever its variable: a list of
known variables left the one beside them (CXX, HOME, NCCL_NET_PLUGIN) to another user. Each
is judged at planning time, before an interpreter is started with them (a
`sitecustomize.py` on PYTHONPATH runs at every start), as sacscale.atomic judges a folder
that others could swap entries in: the path and every folder above it; a file by its own
mode and access list too. One not made yet is judged by the folder it would be made in, where
any user who may make entries there could make it first. A folder the run takes code from
(CODE_FOLDER_ENV: PYTHONPATH, LD_LIBRARY_PATH, PATH, the caches, CUDA_HOME, CPATH, ...) must
take no new entries from others, sticky bit or not, and what the run loads from it is judged
to the depth it loads it (code_folders.code_folder_problem); PYTHONHOME where Python reads its
standard library with the run's PYTHONPLATLIBDIR, and PYTHONPLATLIBDIR's folders under each
prefix as code folders too. A
relative path (one with a `/`: `./x`, `../x`, `a/b`) is judged where the run
starts it: the trainer starts in Snakemake's working folder, where planning runs, and the
reference trainer in its run's work folder (run_config gives both); a bare word (`g++`) is a
command looked up on PATH, which is judged itself, unless an option names a file by it
(`-include x.h`, `@opts`); in a variable whose value is only ever a path (PYTHONPATH,
LD_LIBRARY_PATH, TORCHINDUCTOR_CACHE_DIR, ...: PATH_VALUE_ENV) a bare word is a folder in the
start folder, and is judged as `./word`. Python's own path variables resolve a relative value from the
folder it starts in too (PYTHONPATH, PYTHONHOME, PYTHONUSERBASE, PYTHONPYCACHEPREFIX,
PYTHONSTARTUP; PYTHONEXECUTABLE, which also moves the search for its standard library, is
refused by interpreter_env), all but PYTHONPLATLIBDIR, which is judged under the prefix. The
dynamic loader's tokens ($ORIGIN, $LIB, $PLATFORM) in LD_LIBRARY_PATH (split at ';' as well as
':', as glibc splits it), LD_RUN_PATH, or a run path handed to the linker (`-Wl,-rpath,$ORIGIN`),
are refused: the loader replaces them by values of each program it loads (`$ORIGIN`: the
program's own folder), so no one path can be judged."""

from __future__ import annotations

import os
import re
import shlex
import sys

from sacscale.pipeline.code_folders import (CACHE_ROOT, COMMANDS, LIBRARIES, PYTHON_LIB, WHOLE_TREE, Reach,
                                            code_folder_problem)
from sacscale.pipeline.code_folders import code_path_problem as code_path_problem
from sacscale.pipeline.interpreter_env import FOREIGN_CODE_ENV
from sacscale.pipeline.plan_values import PlanError, shown_path
from sacscale.pipeline.temporary_env import TEMPORARY_FOLDER_ENV

# variable -> what the run's processes take from the path it names, where the message
# needs a reason of its own; any other variable's path gets READS_WHAT_IT_NAMES. Not
# PYTHONSTARTUP: a trainer's interpreter is never interactive (PYTHONINSPECT is refused).
CODE_PATH_ENV = {
    "PATH": "the trainer's command and the tools it starts are looked up in it",
    "LD_LIBRARY_PATH": "the dynamic loader loads shared libraries from it",
    "PYTHONPATH": "Python imports modules from it",
    "PYTHONUSERBASE": "Python imports the user's site-packages from it",
    "PYTHONPYCACHEPREFIX": "Python loads compiled bytecode from it",
    "TORCHINDUCTOR_CACHE_DIR": "torch.compile loads compiled kernels from it",
    "TRITON_CACHE_DIR": "Triton loads compiled GPU kernels from it",
    "CUDA_CACHE_PATH": "CUDA loads compiled GPU code from it",
    "XDG_CACHE_HOME": "libraries keep their caches there, compiled kernels among them",
    "CC": "torch.compile and Triton start it as their C compiler",
    "CXX": "torch.compile starts it as its C++ compiler",
    "HOME": "libraries keep their default caches under it, compiled kernels among them",
    "PYTORCH_KERNEL_CACHE_PATH": "torch loads compiled CUDA kernels from it",
    "TRITON_PTXAS_PATH": "Triton runs it as its PTX assembler",
    "TRITON_CUOBJDUMP_PATH": "Triton runs it to read its compiled kernels",
    "TRITON_NVDISASM_PATH": "Triton runs it to read its compiled kernels",
    "TRITON_LIBDEVICE_PATH": "Triton links its GPU kernels with the device library it names",
    "TRITON_LIBCUDA_PATH": "Triton builds and loads its kernel launchers with the CUDA driver library from it",
    "TRITON_LIBHIP_PATH": "Triton loads the HIP runtime library it names",
    "TRITON_CUDART_PATH": "Triton compiles its kernel launchers with the CUDA headers from it",
    "TRITON_CUDACRT_PATH": "Triton compiles its kernel launchers with the CUDA headers from it",
    "TRITON_OVERRIDE_DIR": "Triton loads kernels from it in place of those it compiles",
    "TORCHINDUCTOR_CUTLASS_DIR": "torch.compile compiles its CUTLASS kernels with the sources from it",
    "ROCM_PATH": "torch takes the ROCm compilers and libraries from it",
    "ROCM_HOME": "torch takes the ROCm compilers and libraries from it",
    "LD_RUN_PATH": ("the linker writes it as the run path of the libraries torch.compile and Triton link, and the "
                    "loader loads their libraries from it"),
    "LIBRARY_PATH": "gcc links what torch.compile and Triton build with the libraries from it",
    "CPATH": "gcc compiles what torch.compile and Triton build with the headers from it",
    "C_INCLUDE_PATH": "gcc compiles what torch.compile and Triton build with the headers from it",
    "CPLUS_INCLUDE_PATH": "gcc compiles what torch.compile builds with the headers from it",
    "TRITON_HOME": "Triton loads compiled GPU kernels from its .triton/cache",
    "TORCH_EXTENSIONS_DIR": "torch builds and loads its C++ extensions there",
    "TORCH_HOME": "torch loads hub code and checkpoints from it",
    "CUDA_HOME": "torch and Triton take the CUDA compiler, headers and libraries from it",
    "CUDA_PATH": "torch and Triton take the CUDA compiler, headers and libraries from it",
    "CUDA_INC_PATH": "CUDA headers are taken from it",
    "CUDNN_HOME": "torch builds its C++ extensions with the cuDNN headers and libraries from it",
    "CUDNN_PATH": "torch builds its C++ extensions with the cuDNN headers and libraries from it",
    "HF_HOME": "Hugging Face libraries import downloaded code (remote-code modules) from it",
    "PYTHONHOME": "Python imports its standard library from it",
}
READS_WHAT_IT_NAMES = "the run reads or runs what it names"
# variables whose value (each entry of a ':' list) is only ever a path, never a command or a
# word: Python, the loader, torch and the caches take a bare word (`evecode`) as a folder in
# the start folder, so here a bare word is judged as one (`./evecode`)
PATH_VALUE_ENV = frozenset({
    *(set(CODE_PATH_ENV) - {"CC", "CXX"}), "PYTHONHOME", "PYTHONSTARTUP", "TORCH_HOME", "TORCH_EXTENSIONS_DIR",
    "TRITON_HOME", "CUDA_HOME", "CUDA_PATH", "HF_HOME", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH", "TRITON_DUMP_DIR", "TORCH_COMPILE_DEBUG_DIR", "CUDNN_HOME", "CUDNN_PATH",
    "CUDA_INC_PATH", "TORCHELASTIC_ERROR_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
})
# PYTHONPLATLIBDIR names a folder under Python's prefix (<prefix>/<platlibdir>/python3.X holds
# the standard library, lib-dynload and site-packages), never a path: Python joins it to its
# prefix, not to the start folder, so `../` climbs out of the prefix and `/x` replaces it.
# Judged, not refused: lib64 is the ordinary value where a distribution builds Python so; the
# folders it selects under each prefix are code folders, as PYTHONHOME's are
PREFIX_FOLDER_ENV = "PYTHONPLATLIBDIR"
PREFIX_FOLDER_WHAT = "Python imports its standard library and site-packages from <prefix>/{}/python3.X"

# the variables whose value is a folder the run takes code from (not the words of a command,
# CC and CXX, where a folder is only read out of an option): code_folder_problem judges them.
# Every variable of CODE_PATH_ENV (a file-naming one, TRITON_PTXAS_PATH, where it names a
# folder), and PYTHONPLATLIBDIR's folders. Not PYTHONSTARTUP (never run: the trainer is not
# interactive), TRITON_DUMP_DIR and TORCH_COMPILE_DEBUG_DIR (dumps written, never loaded),
# TORCHELASTIC_ERROR_FILE (a file written), XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME
# (settings and data, no code): the path rule alone judges those. Python's other variables
# move no code it reads: PYTHONNOUSERSITE and PYTHONSAFEPATH only take folders off sys.path,
# PYTHONCASEOK acts on case-insensitive systems only, PYTHONEXECUTABLE, PYTHONINSPECT and
# PYTHONBREAKPOINT are refused by interpreter_env; PYTHONPATH, PYTHONUSERBASE and
# PYTHONPYCACHEPREFIX are whole trees here
CODE_FOLDER_ENV = frozenset(CODE_PATH_ENV) - {"CC", "CXX"} | {PREFIX_FOLDER_ENV}
# how deep the run takes code from each (code_folders.Reach); any other: every entry below.
# HOME, XDG_CACHE_HOME, TRITON_HOME and PYTHONHOME only root the folders the run loads from (_code_below):
# their own entries are judged, and those folders as deep as the run loads from them
CODE_FOLDER_REACH = {"PATH": COMMANDS, "LD_LIBRARY_PATH": LIBRARIES, "LD_RUN_PATH": LIBRARIES,
                     "LIBRARY_PATH": LIBRARIES, "HOME": CACHE_ROOT, "XDG_CACHE_HOME": CACHE_ROOT,
                     "TRITON_HOME": CACHE_ROOT, "PYTHONHOME": CACHE_ROOT, PREFIX_FOLDER_ENV: PYTHON_LIB}
CODE_BELOW = {
    "HOME": (".triton", ".nv", ".cache/torch", ".cache/torch_extensions", ".cache/triton", ".local/lib"),
    "XDG_CACHE_HOME": ("torch", "torch_extensions", "triton"),
    "TRITON_HOME": (".triton",),
}
# judged by a rule of their own: refused whatever they name, or judged as temporary folders
JUDGED_ELSEWHERE = frozenset({*FOREIGN_CODE_ENV, *TEMPORARY_FOLDER_ENV})

# gcc's (and the linker's) options naming a path in their next word (`-isystem /x`) or after
# `=` (`--sysroot=/x`): a bare word there (`-include x.h`) is a file in the start folder
PATH_OPTIONS = frozenset({
    "-B", "-I", "-L", "-T", "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix",
    "-iwithprefix", "-iwithprefixbefore", "-isysroot", "--sysroot", "-specs", "--specs",
    "-rpath", "--rpath", "-rpath-link", "--rpath-link", "-plugin", "--plugin", "-dynamic-linker", "--dynamic-linker",
    "-o", "-MF", "-MJ",  # files gcc writes: its output, its dependency and compilation-database files
})
# ... and those gcc also takes joined (`-I/x`, `-isystem/x`), longest first; not -B or -T,
# whose joined forms are also the linker's flags (-Bstatic, -Ttext=0)
JOINED_PATH_OPTIONS = ("-iwithprefixbefore", "-iwithprefix", "-idirafter", "-isysroot", "-isystem", "-iprefix",
                       "-imacros", "-include", "-iquote", "-I", "-L")
# a macro's value is a string the code is compiled with (`-DFOO=a/b`), not a path gcc opens:
# read only as any value after `=` is, never from a `/` inside it
MACRO_OPTIONS = ("-D", "-U")
# words gcc hands on to the tool it starts: a comma list (`-Wl,-rpath,/x`) or the next word
# (`-Xlinker /x`); `-wrapper`'s next word is the list of the program it starts everything under
PASSED_ON_LISTS = ("-Wl,", "-Wa,", "-Wp,")
PASSED_ON_WORD = frozenset({"-Xlinker", "-Xassembler", "-Xpreprocessor"})
LIST_IN_NEXT_WORD = frozenset({"-wrapper"})

# the dynamic loader's tokens and what it puts in their place, in LD_LIBRARY_PATH and in a
# library's run path (`-Wl,-rpath,$ORIGIN/x`): a value of each program it loads, not of the
# folder the run starts in, so the folder such a path names differs from program to program
LOADER_TOKENS = {
    "ORIGIN": "each program's folder",
    "LIB": "a library folder name of its own choosing (lib, lib64, lib/x86_64-linux-gnu)",
    "PLATFORM": "the processor's platform name (x86_64, haswell)",
}
LOADER_TOKEN = re.compile(r"\$(?:\{(%s)\}|(%s)(?![A-Za-z0-9_]))" % (("|".join(LOADER_TOKENS),) * 2))
# LD_PRELOAD, LD_AUDIT: refused whatever they name. LD_RUN_PATH: the linker writes it, tokens
# and all, as the run path of each library it links without -rpath (torch.compile and Triton
# link theirs), where the loader replaces them in turn
LOADER_PATH_ENV = frozenset({"LD_LIBRARY_PATH", "LD_RUN_PATH"})
# glibc's loader splits LD_LIBRARY_PATH at ';' as well as ':' (elf/dl-load.c, _dl_init_paths
# hands fillin_rpath the separators ":;"; an empty entry is the start folder there too), but a
# run path (DT_RUNPATH, so LD_RUN_PATH) at ':' alone (decompose_rpath)
SEMICOLON_LIST_ENV = frozenset({"LD_LIBRARY_PATH"})
RUN_PATH_OPTIONS = ("-rpath", "--rpath", "-R")  # the linker's: the path is its next word, or after `=`


def named_paths(value: str, home: str | None = None, start: str | None = None, only_paths: bool = False) -> list[str]:
    """The absolute paths `value` names: itself, or each entry of a ':'-separated list
    (`file:///x` gives /x), each word of a command with arguments (`ccache /x/g++`), a
    compiler option's path (`-I/x`, `-isystem /x`, `--sysroot=x`, `@opts`, the items of
    `-Wl,-rpath,/x`); a `~` path expanded with `home` (the run's own HOME, where its env sets
    one); a relative one joined to `start` (default: this process's working folder, where the
    run starts). A value naming no path (`0`, `INFO`, `0,1`, `-O2`, a bare word) gives none,
    unless `only_paths` (a variable of PATH_VALUE_ENV): then each entry is a path, a bare
    word one in the start folder, judged there whether or not it exists yet, and an empty
    entry of a list (`a::b`) the start folder itself (a wholly empty value is no setting)."""
    start = start or os.getcwd()
    found = []
    entries = value.split(":")
    for entry in entries:
        if only_paths and entry == "" and len(entries) > 1:  # `a::b`, `:a`: the loader and Python read the start folder
            found.append(start)
            continue
        whole = _as_path(entry, home, start, bare=only_paths)
        if whole is not None and (only_paths or os.path.lexists(whole)):  # a path with blanks in it, there already
            found.append(whole)
            continue
        for words in _readings(entry):
            for text, named in _path_texts(_handed_on(words)):
                path = _as_path(text, home, start, bare=named)
                if path is not None:
                    found.append(path)
    return list(dict.fromkeys(found))


def _readings(entry: str) -> list[list[str]]:
    """The words of `entry` split at blanks, and as a shell splits them where that differs
    (`g++ '-B/x/'`, `"/x/g++"`): a tool that starts the value through a shell reads the latter."""
    readings = [entry.split()]
    try:
        quoted = shlex.split(entry)
    except ValueError:  # an unclosed quote: no shell reading
        return readings
    return readings + ([quoted] if quoted != readings[0] else [])


def _handed_on(words: list[str]):
    """The words, with those gcc hands on to another tool in their place (`-Wl,a,b` as `a b`,
    `-Xlinker a` as `a`): the linker reads options from them as gcc does from its own."""
    words = iter(words)
    for word in words:
        listed = next((p for p in PASSED_ON_LISTS if word.startswith(p)), None)
        if listed:
            yield from word.removeprefix(listed).split(",")
        elif word in PASSED_ON_WORD:
            yield next(words, "")
        elif word in LIST_IN_NEXT_WORD:
            yield from next(words, "").split(",")
        else:
            yield word


def _path_texts(words):
    """(text, named) for each text of the words that may be a path: named where an option or
    `@` says it is one (a bare `opts` too), else a path only where it looks like one."""
    takes_next = False
    for word in words:
        if takes_next and not word.startswith("-"):
            yield word, True
        yield from _in_word(word)
        takes_next = word in PATH_OPTIONS


def _in_word(word: str):
    if word.startswith("@"):  # gcc and the linker read more options from that file
        yield word[1:], True
        return
    if "=" in word:  # the path after the last `=`: a bare one where the option takes a path
        yield word.rpartition("=")[2], word.partition("=")[0] in PATH_OPTIONS
    elif not word.startswith("-"):
        yield word, False
    if word.startswith("-") and not word.startswith(MACRO_OPTIONS):
        yield from _joined_to_option(word)


def _joined_to_option(word: str):
    """The texts of an option word where a path may start: after a listed option (`-I`), from
    its first `/` (`-MF/x`, `-o/x`), and after its first one or two letters (`-Bdir/`,
    `-MFdep/x`, `-X~/x`). Any option gcc or a tool it starts takes a path joined to (-MF, -MJ,
    -B, -T, ...) is read so, not only those listed; a text read here that names nothing there
    is judged by the folder it would be made in, the start folder for a relative one. A joined
    relative path with a `/` (`-MFbuild/tmp/x.d`) is read from its first `/` too (`/tmp/x.d`):
    written as the option's next word, it is read as relative only."""
    joined = next((o for o in JOINED_PATH_OPTIONS if word.startswith(o) and word != o), None)
    if joined:
        yield word.removeprefix(joined), True
    if "/" in word:
        yield word[word.index("/"):], False
    for letters in (1, 2):
        rest = word[1 + letters:]
        if rest[:1] not in ("", "-", "/") and ("/" in rest or rest.startswith("~")):
            yield rest, False


def _as_path(text: str, home: str | None, start: str, bare: bool = False) -> str | None:
    """The absolute path `text` names; a bare word (`g++`, `INFO`) only where `bare` says an
    option names a file by it."""
    if text.startswith("/"):
        return "/" + text.lstrip("/")  # `///x`, as a file URL leaves it, is /x
    if text == "~" or text.startswith("~/"):
        return _as_path((home or os.path.expanduser("~")) + text[1:], None, start)  # a relative HOME too
    if text.startswith("~") and (expanded := os.path.expanduser(text)) != text:  # ~user/...
        return expanded
    if "/" in text or (bare and text):  # `../x` from the run's folder: kept unnormalised, so the message shows both
        return os.path.join(start, text)
    return None  # a word, a number: not a path


def check_code_paths(env: dict, where: str, starts: tuple[str, ...] = ()) -> None:
    """PlanError naming the first variable of a run's `env` (in name order) that names a
    path another user could put code or files at; a relative path is judged from each of
    `starts`, the folders the run's processes start in (default: this one)."""
    home = env.get("HOME") or None
    platlibdir = _platlibdir(env, where)  # a bad value named before PYTHONHOME is judged with it
    for name in sorted(set(env) - JUDGED_ELSEWHERE):
        value = str(env[name])
        if found := loader_token(name, value):
            token, text = found
            raise PlanError(f"{where}: {name}: {token} in {shown_path(text)}: the loader replaces it with "
                            f"{LOADER_TOKENS[token.strip('${}')]}, which planning cannot judge; name the folder itself")
        if name == PREFIX_FOLDER_ENV:
            paths = _under_prefixes(value, env, where, starts)
        else:
            listed = value.replace(";", ":") if name in SEMICOLON_LIST_ENV else value
            paths = dict.fromkeys(p for start in starts or (None,)
                                  for p in named_paths(listed, home, start, name in PATH_VALUE_ENV))
        for path in paths:
            path, problem = _first_problem(name, path, _code_below(name, platlibdir))
            if problem:
                what = PREFIX_FOLDER_WHAT.format(value) if name == PREFIX_FOLDER_ENV else \
                    CODE_PATH_ENV.get(name, READS_WHAT_IT_NAMES)
                raise PlanError(f"{where}: {name}: {shown_path(path)} {problem}; {what}, so that user's code would run "
                                "in the run: name a folder of your own")


def _first_problem(name: str, path: str, below: tuple = ()) -> tuple[str, str | None]:
    """(the path judged, why another user could put code there) for a path `name` gives: the
    path itself, then, for a code folder, what the run loads from it, and the entries `below`
    it the run loads from ((subpath, Reach) pairs: a folder as deep as its reach, a file by its
    own bits, one not there yet by the folder the run would make it in)."""
    if problem := code_path_problem(path):
        return path, problem
    if name not in CODE_FOLDER_ENV:
        return path, None
    if problem := code_folder_problem(path, CODE_FOLDER_REACH.get(name, WHOLE_TREE)):
        return path, problem
    for subpath, reach in below:
        inner = os.path.join(path, subpath)
        if problem := code_path_problem(inner) or code_folder_problem(inner, reach):
            return inner, problem
    return path, None


def _code_below(name: str, platlibdir: str) -> tuple[tuple[str, Reach], ...]:
    """The folders below the one `name` gives that the run loads code from, each with how deep:
    the caches under HOME and XDG_CACHE_HOME; under PYTHONHOME, <home>/<platlibdir> where Python
    takes its standard library (and its zip) with the run's PYTHONPLATLIBDIR, and <home>/lib,
    where site adds site-packages whatever the platlibdir."""
    if name == "PYTHONHOME":
        return tuple((libdir, PYTHON_LIB) for libdir in dict.fromkeys(("lib", platlibdir)))
    return tuple((subpath, WHOLE_TREE) for subpath in CODE_BELOW.get(name, ()))


def loader_token(name: str, value: str) -> tuple[str, str] | None:
    """(the loader's token as written, the text holding it) where `value` gives the loader a
    path with one: any entry of LD_LIBRARY_PATH or LD_RUN_PATH, or a run path a compiler option hands the
    linker (`-Wl,-rpath,$ORIGIN`, `-Xlinker -rpath -Xlinker $ORIGIN`, `-Wl,-R,$LIB`), in any
    variable, since torch.compile and Triton build libraries with the flags they are given."""
    if name in LOADER_PATH_ENV:
        texts = [value]
    else:
        texts = [word for words in _readings(value) for word in _run_paths(_handed_on(words))]
    for text in texts:
        if match := LOADER_TOKEN.search(text):
            return match.group(0), text
    return None


def _run_paths(words):
    """The texts of `words` the linker takes as a run path: the word after a run-path option,
    or the text after one (`-rpath=x`, `-Rx`)."""
    after_option = False
    for word in words:
        if after_option:
            yield word
        after_option = word in RUN_PATH_OPTIONS
        joined = next((o for o in RUN_PATH_OPTIONS if word.startswith(o) and word != o), None)
        if joined:
            yield word.removeprefix(joined).removeprefix("=")


def _under_prefixes(value: str, env: dict, where: str, starts: tuple[str, ...]) -> list[str]:
    """The folders PYTHONPLATLIBDIR `value` names under each prefix the run's Python may take
    (this interpreter's, its base's, and PYTHONHOME's where the env gives one); PlanError where
    it is not a plain folder name (`lib`, `lib64`). An empty value is no setting."""
    if not value:
        return []
    _platlibdir({PREFIX_FOLDER_ENV: value}, where)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for start in starts or (None,):
        prefixes.update(named_paths(str(env.get("PYTHONHOME") or ""), None, start, True))
    return [os.path.join(prefix, value) for prefix in sorted(prefixes)]


def _platlibdir(env: dict, where: str) -> str:
    """The folder name Python started with `env` takes its libraries from under its prefix:
    PYTHONPLATLIBDIR where set, else this interpreter's; PlanError where it is not a plain
    folder name."""
    value = str(env.get(PREFIX_FOLDER_ENV) or "")
    if "/" in value or value in (".", ".."):
        raise PlanError(f"{where}: {PREFIX_FOLDER_ENV}: {shown_path(value)} is not a plain folder name (like lib "
                        "or lib64): Python joins it to its prefix, not to the folder the run starts in, so a path "
                        "there leads out of the prefix to a standard library and site-packages that are not the "
                        "interpreter's; give a folder name or leave it out")
    return value or sys.platlibdir
