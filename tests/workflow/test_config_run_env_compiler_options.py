"""The paths a compiler's options name in a run env are judged like any other. Before: only
a word that was a path itself, or the text after an option's `=` or letter, was read, so
`env: {CXX: "g++ @/home/eve/opts"}` planned, and gcc read its options from eve's file (a
`-wrapper` or `-B` there ran eve's script as root); `-Wl,-rpath,/x` (a linker's comma list)
and `-wrapper /x,...` named no path, and a bare word after an option taking a file
(`-include x.h`, `--sysroot=sys`, `@opts`) was taken for a command. Now an option taking a
path in its next word, joined or after `=`, an `@file`, and the items of what gcc hands on to
the linker, assembler or preprocessor (`-Wl,`, `-Xlinker`) are each read as a path. Then
only listed options were read joined: `g++ -MD -MF/home/eve/dep` (a dependency file, -MJ too)
and `-Bevl/` (a relative folder) were read as files named `-MF/home/eve/dep` and `-Bevl/` in
the start folder, and g++ wrote through eve's link as root. Now any option word is read from
its first `/` and after its first one or two letters."""

import os

import pytest

from sacscale.pipeline.code_paths_env import check_code_paths, named_paths
from tests.workflow.test_config_run_env_any_path import TAIL, WHERE, refused

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
CXX_WHY = "torch.compile starts it as its C++ compiler"
OPEN_WHY = "is inside {}, which is writable by other users without the sticky bit (mode 0777)"


@pytest.fixture
def open_folder(tmp_path):
    path = tmp_path / "open"
    path.mkdir()
    path.chmod(0o777)
    return path


@AS_ROOT
def test_an_options_file_in_another_users_folder_is_refused(tmp_path):
    eve = tmp_path / "eve"
    eve.mkdir(mode=0o755)
    os.chown(eve, 1001, 1001)
    assert refused({"CXX": f"g++ @{eve}/opts"}) == (
        f"{WHERE}: CXX: '{eve}/opts' is inside {eve}, which belongs to uid 1001, another user; {CXX_WHY}, {TAIL}")


# the separate-word absolute forms (`-isystem /x`) were judged before as words of their own:
# kept here so that reading options never loses them
@pytest.mark.parametrize("form", [
    "g++ @{}", "g++ -Wl,-rpath,{}", "g++ -Wl,--rpath,{}", "g++ -Wl,-rpath={}", "g++ -Wl,@{}", "g++ -Wa,-I,{}",
    "g++ -wrapper {},-q", "g++ -Xlinker {}", "g++ -Xlinker -rpath={}", "g++ -iprefix {}", "g++ -isystem {}",
    "g++ -idirafter {}", "g++ -include {}", "g++ -imacros {}", "g++ -iquote {}", "g++ --sysroot {}",
    "g++ --sysroot={}", "g++ -specs={}", "g++ -fplugin={}", "g++ -B {}", "g++ -B{}", "g++ -isystem{}",
])
def test_a_path_a_compiler_option_names_is_judged(open_folder, form):
    path = open_folder / "x"
    assert refused({"CXX": form.format(path)}) == (
        f"{WHERE}: CXX: '{path}' {OPEN_WHY.format(open_folder)}; {CXX_WHY}, {TAIL}")


@pytest.mark.parametrize("form", [
    "g++ @x", "g++ -include x", "g++ -isystem x", "g++ -iquote x", "g++ -isystemx", "g++ -Ix", "g++ -Lx",
    "g++ --sysroot x", "g++ --sysroot=x", "g++ -specs=x", "g++ -B x", "g++ -Wl,-rpath,x", "g++ -Wl,-rpath=x",
    "g++ -Xlinker -rpath -Xlinker x", "g++ -Wl,@x",
])
def test_a_bare_file_an_option_names_is_judged_in_the_start_folder(open_folder, monkeypatch, form):
    monkeypatch.chdir(open_folder)  # where the trainer starts, and gcc takes `x` from
    assert refused({"CXX": form}) == (
        f"{WHERE}: CXX: '{open_folder}/x' {OPEN_WHY.format(open_folder)}; {CXX_WHY}, {TAIL}")


def test_options_naming_no_path_name_none(tmp_path):
    for value in ("-O2", "-march=native -g -DNDEBUG", "g++ -O3 -lm", "-Wl,-O1,--as-needed,-Bstatic",
                  "-fplugin=annobin", "-Xlinker -Bsymbolic", "0", "INFO", "-wrapper gdb,--args"):
        assert named_paths(value, start="/s") == [], value
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    check_code_paths({"CXX": f"g++ @{mine}/opts -Wl,-rpath,{mine} -isystem {mine} --sysroot={mine}",
                      "CXXFLAGS": "-O2 -march=native"}, WHERE)


# any option word may have a path joined to it, not only the options listed: gcc's dependency
# files (-MF, -MJ) and its output (-o) are written there, as root through another user's link
@pytest.mark.parametrize("form", ["g++ -MD -MF{}", "g++ -MJ{}", "g++ -o{}", "g++ -MD -MF {}", "g++ -Wp,-MD,{}"])
def test_a_path_joined_to_any_option_is_judged(open_folder, form):
    path = open_folder / "dep"
    assert refused({"CXX": form.format(path)}) == (
        f"{WHERE}: CXX: '{path}' {OPEN_WHY.format(open_folder)}; {CXX_WHY}, {TAIL}")


@AS_ROOT
@pytest.mark.parametrize("option", ["-MF", "-MJ", "-o"])
def test_a_dependency_file_through_another_users_link_is_refused(tmp_path, option):
    eve = tmp_path / "home" / "eve25"
    eve.mkdir(parents=True, mode=0o755)
    os.chown(eve, 1001, 1001)
    (eve / "dep").symlink_to(tmp_path / "secret")
    os.lchown(eve / "dep", 1001, 1001)
    assert refused({"CXX": f"g++ -MD {option}{eve}/dep"}) == (
        f"{WHERE}: CXX: '{eve}/dep' is reached through {eve}/dep, another user's symbolic link (uid 1001); "
        f"{CXX_WHY}, {TAIL}")


@AS_ROOT
@pytest.mark.parametrize("form", ["g++ -Bevl/", "g++ -MFevl/dep", "g++ -MF evl"])
def test_a_relative_path_joined_to_an_option_through_a_link_into_another_users_folder_is_refused(
        tmp_path, monkeypatch, form):
    eve = tmp_path / "eve"
    eve.mkdir(mode=0o755)
    os.chown(eve, 1001, 1001)
    start = tmp_path / "start"
    start.mkdir(mode=0o755)
    (start / "evl").symlink_to(eve)  # one's own link, into eve's folder
    monkeypatch.chdir(start)  # where the trainer starts, and gcc takes `evl/` from
    says = refused({"CXX": form})
    assert says.startswith(f"{WHERE}: CXX: '{start}/evl"), says
    assert "belongs to uid 1001, another user" in says and says.endswith(TAIL), says


def test_option_words_naming_nothing_outside_the_start_folder_pass(tmp_path, monkeypatch):
    """A macro's value is a string, not a path (`-DFOO=a/b` is judged as any value with a
    `/` is, from the start folder, never as `/b`); the other words name no path at all."""
    for value in ("-std=c++17", "-DNAME=1", "-UNAME", "-MD -MMD -MP", "-fplugin=annobin -O2", "-x c++ -j 4"):
        assert named_paths(value, start="/s") == [], value
    assert named_paths("-DFOO=a/b", start="/s") == ["/s/a/b"]
    assert named_paths("-DFOO=a/home", start="/s") == ["/s/a/home"]
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.chdir(mine)
    check_code_paths({"CXX": "g++ -O2 -march=native -Wl,-O1,--as-needed,-Bstatic -DFOO=a/b -MD -MFdep/x.d -Bbin/",
                      "CXXFLAGS": "-fplugin=annobin -std=c++17 -DNAME=1", "NCCL_DEBUG": "INFO", "N": "4"}, WHERE)


# a value a shell splits (a wrapper script, a build tool) reads its quotes away: judged both ways
@pytest.mark.parametrize("form", ["g++ '-B{}/'", "\"{}/g++\"", "g++ @'{}/opts'", "g++ -I\"{}/inc\""])
def test_a_quoted_path_is_judged_as_a_shell_reads_it(open_folder, form):
    assert refused({"CXX": form.format(open_folder)}).startswith(f"{WHERE}: CXX: '{open_folder}/")


def test_an_unclosed_quote_is_read_at_blanks_only(tmp_path):
    assert named_paths("g++ '-O2", start="/s") == []
