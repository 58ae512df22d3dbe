"""`reference-env --create --requirements FILE` reads the file as pip reads it. Before: the
requirement part of a line was split into shell words, which pip never does (it splits the
options part only), so `./mine/p\\kg` was judged as `./mine/pkg` while pip installed the
folder `p\\kg`, another user's, and ran her setup.py as root; a file that is not UTF-8 was
read with its bad bytes replaced and passed, then pip died with a traceback; a 700-deep
chain of `-r` files gave "input nested too deep", naming nothing; and a project holding
any link was refused as "writable by other users (mode 0777)" (a link's own mode bits).
Now the requirement is judged as written, the file decoded as pip decodes it (or refused),
the nesting bounded, and a link judged by its owner and where it leads."""

import os
from pathlib import Path

import pytest

from sacscale.commands import _requirements
from sacscale.commands._pip_options import break_line
from sacscale.pipeline.plan_values import shown_path
from tests.reference_env_requirements_stand_in import THING_TAIL, created, project

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's file is made by root (chown)")
ODD_NAMES = ["p\\kg", "'pkg'", '"pkg"', "p kg", "pk#g", "p;kg"]


def refused_with(capsys, req, says):
    assert capsys.readouterr().err.strip() == f"sacscale reference-env: error: --requirements {req}: {says}"


@AS_ROOT
@pytest.mark.parametrize("name", ODD_NAMES)
def test_another_users_project_named_with_quotes_or_backslashes_is_refused(tmp_path, capsys, pip_calls,
                                                                           monkeypatch, name):
    project(tmp_path / "mine" / "pkg")
    hers = project(tmp_path / "mine" / name, uid=1001)
    req = tmp_path / "req.txt"
    req.write_text(f"./mine/{name}\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 2
    refused_with(capsys, req, f"{shown_path(req)} line 1: {shown_path(hers)} belongs to uid 1001, another user; "
                              f"{THING_TAIL}")
    assert pip_calls == []


pip_req_file = pytest.importorskip("pip._internal.req.req_file")
pip_constructors = pytest.importorskip("pip._internal.req.constructors")
LINES = ["./mine/{n}", "./mine/{n}[extra]", "./mine/{n}; python_version > '3'", "./mine/{n} ;python_version>'3'",
         "x @ file://{t}/mine/{q}", "x[y] @ file://{t}/mine/{q} ; python_version > '3'", "file://{t}/mine/{q}",
         "./mine/{n} --hash=sha256:00", "{t}/mine/{n}", "./mine/\\\n{n}", "# ./mine/{n}\n./mine/pkg",
         "./mine/{n} \\\n# a comment\n"]


def pips_local(req):
    """The local path pip installs each requirement of the file `req` from, by pip's own parser."""
    found = []
    for parsed in pip_req_file.parse_requirements(str(req), session=None):
        link = pip_constructors.install_req_from_parsed_requirement(parsed).link
        found += [Path(link.file_path)] if link and link.scheme == "file" else []
    return found


def our_locals(req):
    return [path for _, line in _requirements._lines(req) for _, path in _requirements._named(line, req.parent)]


@pytest.mark.parametrize("name", [name for name in ODD_NAMES if ";" not in name])  # pip refuses `p;kg`
@pytest.mark.parametrize("line", LINES)
def test_a_requirement_is_judged_as_pips_own_parser_reads_it(tmp_path, monkeypatch, line, name):
    from urllib.parse import quote

    for folder in ("pkg", name):
        project(tmp_path / "mine" / folder)
    req = tmp_path / "req.txt"
    req.write_text(line.format(n=name, q=quote(name), t=tmp_path) + "\n")
    monkeypatch.chdir(tmp_path)
    pips = pips_local(req)
    assert pips and set(pips) <= set(our_locals(req))


def test_the_requirement_part_is_pips():
    for line in ["./mine/p\\kg", "./mine/'p kg' --hash=x", "x @ file:///a%20b ; python_version > '3' -e y"]:
        assert break_line(line)[0] == pip_req_file.break_args_options(line)[0]


@pytest.mark.parametrize("data", [b"six\n", "\ufeffsix\n".encode("utf-8"), "six\n\xe9\n".encode("utf-16"),
                                  "six\n".encode("utf-32"), b"# -*- coding: latin-1 -*-\nsix # \xe9\n",
                                  b"six\n#coding=cp1252\n\x80\n"])
def test_a_file_is_decoded_as_pip_decodes_it(data):
    assert _requirements._decoded(data) == pip_req_file._decode_req_file(data, "req.txt")


@pytest.mark.parametrize(("data", "says"), [
    (b"six\n\x00\xff\xfe -e ./mine/pkg\n", "is not valid utf-8 text (byte 0xff at offset 5)"),
    (b"# coding: no-such-code\nsix\n", "declares the encoding 'no-such-code', which Python does not know"),
    (b"# -*- coding: ascii -*-\nsix\n\xe9\n", "is not valid ascii text (byte 0xe9 at offset 28)"),
])
def test_a_file_pip_cannot_decode_is_refused_naming_it(tmp_path, capsys, pip_calls, data, says):
    req = tmp_path / "req.txt"
    req.write_bytes(data)
    assert created(tmp_path, req) == 2
    refused_with(capsys, req, f"{shown_path(req)} {says}, so pip cannot read it: save it as UTF-8")
    assert pip_calls == []
    assert not (tmp_path / "venv").exists()


@AS_ROOT
def test_a_utf16_file_naming_another_users_project_is_refused(tmp_path, capsys, pip_calls, monkeypatch):
    hers = project(tmp_path / "eve" / "pkg", uid=1001)
    req = tmp_path / "req.txt"
    req.write_bytes(f"six\n-e {hers}\n".encode("utf-16"))
    assert created(tmp_path, req) == 2
    refused_with(capsys, req, f"{shown_path(req)} line 2: {shown_path(hers)} belongs to uid 1001, another user; "
                              f"{THING_TAIL}")


def chain(tmp_path, depth):
    for level in range(depth):
        (tmp_path / f"r{level}.txt").write_text(f"six\n-r r{level + 1}.txt\n")
    (tmp_path / f"r{depth}.txt").write_text("six\n")
    return tmp_path / "r0.txt"


def test_requirements_files_nested_too_deep_are_refused_naming_the_first(tmp_path, capsys, pip_calls):
    req = chain(tmp_path, 700)
    assert created(tmp_path, req) == 2
    deepest = tmp_path / f"r{_requirements.NESTING_MAX + 1}.txt"
    refused_with(capsys, req, f"{shown_path(req)} names requirements files (-r/-c) nested more than "
                              f"{_requirements.NESTING_MAX} deep (the deepest reached: {shown_path(deepest)}), more "
                              "than are judged here: name fewer levels of files")
    assert pip_calls == []


def test_requirements_files_nested_as_deep_as_judged_go_to_pip(tmp_path, pip_calls):
    req = chain(tmp_path, _requirements.NESTING_MAX)
    assert created(tmp_path, req) == 1
    assert pip_calls == [str(req)]


def test_ones_own_project_holding_links_goes_to_pip(tmp_path, pip_calls, monkeypatch):
    mine = project(tmp_path / "proj")
    (mine / "README.md").write_text("mine\n")
    (mine / "README").symlink_to("README.md")
    (mine / "docs").symlink_to(".")
    req = tmp_path / "req.txt"
    req.write_text("./proj\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 1
    assert pip_calls == [str(req)]


@AS_ROOT
def test_a_projects_link_to_another_users_file_is_refused_naming_it(tmp_path, capsys, pip_calls, monkeypatch):
    hers = project(tmp_path / "shared") / "setup.py"
    os.chown(hers, 1001, 1001)
    mine = tmp_path / "proj"
    mine.mkdir()
    (mine / "setup.py").symlink_to(hers)
    req = tmp_path / "req.txt"
    req.write_text("./proj\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 2
    refused_with(capsys, req, f"{shown_path(req)} line 1: {shown_path(mine)} holds {shown_path(mine / 'setup.py')}, "
                              f"which leads to {shown_path(hers)}, which belongs to uid 1001, another user; "
                              f"{THING_TAIL}")


@AS_ROOT
def test_another_users_link_in_ones_project_is_refused(tmp_path, capsys, pip_calls, monkeypatch):
    mine = project(tmp_path / "proj")
    (mine / "README").symlink_to("setup.py")
    os.lchown(mine / "README", 1001, 1001)
    req = tmp_path / "req.txt"
    req.write_text("./proj\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 2
    refused_with(capsys, req, f"{shown_path(req)} line 1: {shown_path(mine)} holds {shown_path(mine / 'README')}, "
                              f"which is a link that belongs to uid 1001, another user; {THING_TAIL}")
