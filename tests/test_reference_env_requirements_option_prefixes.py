"""`reference-env --create --requirements FILE` reads a line's options as pip does. Before:
options were compared by their exact spellings, but pip's optparse takes any start of a long
option no other option shares, so `--edit /home/eve/pkg` (pip's `--editable`), `--requirem
her.txt`, `--constr=her.txt`, `--find-link /home/eve` passed the check and pip ran another
user's setup.py as root. Now each long option is resolved as pip resolves it and judged as
the option it is; an option pip does not know, or the start of several, is refused."""

import os

import pytest

from sacscale.commands import _pip_options
from sacscale.commands._pip_options import LONG_OPTIONS, SHORT_OPTIONS, UnreadOption, break_line, option_values
from tests.reference_env_requirements_stand_in import THING_TAIL, created, evil_project

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's file is made by root (chown)")
FILE_TAIL = ("pip installs what it names as this user, so that user's code could run as this user: name a "
             "requirements file of your own")
NOT_JUDGED = "pip would refuse the file, and what it names is not judged here"


@AS_ROOT
@pytest.mark.parametrize("line", ["--edit {p}", "--edit={p}", "--e\\\ndit {p}", "--ed {p}", "--find-link {p}",
                                  "--fi={p}", "--index file://{p}", "--pypi file://{p}", "--extra-index file://{p}",
                                  "--pre --edit {p}", "--hash=sha256:00 --editab {p}", "numpy --edit {p}",
                                  "-e{p}", "--no-index -f {p}", "--only-binary :all: --find {p}"])
def test_another_users_project_by_a_start_of_pips_option_is_refused(tmp_path, capsys, pip_calls, monkeypatch,
                                                                      line):
    project = evil_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    req = tmp_path / "req.txt"
    req.write_text("numpy==2.0\n" + line.format(p=project) + "\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 2: '{project}' belongs to uid 1001, "
        f"another user; {THING_TAIL}")
    assert pip_calls == []


@AS_ROOT
@pytest.mark.parametrize("option", ["--requirem ", "--constr=", "--requireme ", "--cons=", "--requirement=", "-r"])
def test_another_users_nested_file_by_a_start_of_pips_option_is_refused(tmp_path, capsys, pip_calls, option):
    (tmp_path / "sub").mkdir()
    nested = tmp_path / "sub" / "more.txt"
    nested.write_text("numpy\n")
    os.chown(nested, 1001, 1001)
    req = tmp_path / "req.txt"
    req.write_text(f"{option}sub/more.txt\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 1: '{nested}' belongs to uid 1001, "
        f"another user; {FILE_TAIL}")
    assert pip_calls == []


@pytest.mark.parametrize(("line", "says"), [
    ("--e /x/pkg", "'--e': the start of 2 of pip's options (--editable, --extra-index-url); "
                   f"{NOT_JUDGED}: write the option in full"),
    ("--no=x", "'--no': the start of 3 of pip's options (--no-binary, --no-index, --no-require-hashes); "
               f"{NOT_JUDGED}: write the option in full"),
    ("--editables /x/pkg", f"'--editables': no option pip reads in a requirements file is or starts so; "
                           f"{NOT_JUDGED}: give one of pip's options"),
    ("numpy -x/x/pkg", f"'-x/x/pkg': -x is no option pip reads in a requirements file; {NOT_JUDGED}: give one "
                       "of pip's options"),
])
def test_an_option_pip_would_refuse_is_refused_naming_it(tmp_path, capsys, pip_calls, line, says):
    req = tmp_path / "req.txt"
    req.write_text(f"numpy\n{line}\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 2: {says}")
    assert pip_calls == []


def test_ones_own_lines_with_pips_options_go_to_pip(tmp_path, capsys, pip_calls, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    (tmp_path / "more.txt").write_text("numpy\n")
    req = tmp_path / "req.txt"
    req.write_text("--pre\n--only-bin :all:\n--prefer-binary --no-index\n--edit ./mine\n--requirem more.txt\n"
                   "numpy --hash=sha256:00 -C x=y\n--index-url https://example.org/simple\n-- -x --e\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 1
    assert pip_calls == [str(req)]


pip_req_file = pytest.importorskip("pip._internal.req.req_file")
PIP_LOCAL_DESTS = {"requirements": "--requirement", "constraints": "--constraint", "editables": "--editable",
                   "find_links": "--find-links", "index_url": "--index-url", "extra_index_urls": "--extra-index-url"}
LINES = ["--edit X", "--edit=X", "--requirem F", "--constr=F", "--find-link D", "--index U", "--pypi U",
         "--extra-index U", "-eX", "-e=X", "-e X -e Y", "--trusted-host --edit X", "--hash=sha256:00 --edit X",
         "--pre --edit X -- -e Y", "x --edit X", "x -e X", "--only-binary :all: --editable=X", "--e X", "--no X",
         "--editables X", "-x X", "-e", "--edit=", "--pre=1 -e X", "--req F", "--co=F", "--cons=F", "- -e X",
         "-e X Y --edit Z", "--trusted-host h --find-links D --requirement=F"]


def pips_reading(line):
    """(option, value) of each option naming something local, as pip's own parser reads them, or None where it
    refuses the line."""
    _, options = pip_req_file.break_args_options(line)
    parser = pip_req_file.build_parser()
    defaults = parser.get_default_values()
    defaults.index_url = None  # as pip's line parser sets it
    try:
        opts, _ = parser.parse_args(pip_req_file.shlex.split(options), defaults)
    except pip_req_file.OptionParsingError:
        return None
    read = []
    for dest, option in PIP_LOCAL_DESTS.items():
        values = getattr(opts, dest) or []
        read += [(option, value) for value in ([values] if isinstance(values, str) else values)]
    return sorted(read)


def our_reading(line):
    _, options = break_line(line)
    try:
        read = list(option_values(options.split()))
    except UnreadOption:
        return None
    return sorted((option.replace("--pypi-url", "--index-url"), value) for option, value in read
                  if LONG_OPTIONS[option] != _pip_options.VALUE)


@pytest.mark.parametrize("line", LINES)
def test_a_lines_options_are_read_as_pips_own_parser_reads_them(line):
    assert our_reading(line) == pips_reading(line)


def test_the_options_are_those_of_the_pip_followed():
    import pip

    if pip.__version__ != _pip_options.PIP_FOLLOWED:
        pytest.skip(f"pip {pip.__version__} here; the options follow pip {_pip_options.PIP_FOLLOWED}")
    parser = pip_req_file.build_parser()
    assert sorted(name for option in parser.option_list for name in option._long_opts) == sorted(LONG_OPTIONS)
    assert {short: option._long_opts[0] for option in parser.option_list for short in option._short_opts} == \
        SHORT_OPTIONS
    assert all(option.takes_value() == (LONG_OPTIONS[option._long_opts[0]] != _pip_options.FLAG)
               for option in parser.option_list)
