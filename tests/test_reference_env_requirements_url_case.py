"""`reference-env --create --requirements FILE` where a line names another user's project by
a `file:` URL with its scheme in capitals (`FILE:///x`, `x @ FILE:///x`) or by a direct
reference with no scheme (`x[extra] @ /x`). Before: the check read `file:` case-sensitively
and took no path after `@`, so all three passed it to pip (which refused them, one with its
own traceback, after the venv was made). Now the scheme counts in any case, as urlsplit
reads it, and a direct reference's path is judged as a `file:` URL's: one line, exit 2."""

import os

import pytest

from tests.reference_env_requirements_stand_in import THING_TAIL, created, evil_project

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")


@pytest.mark.parametrize("line", ["FILE://{p}", "x @ FILE://{p}", "File:{p}", "x[extra] @ {p}", "x@{p}",
                                  "x [extra]@ {p} ; python_version>'3'", "Git+FILE://{p}@v1#egg=x",
                                  "-e FILE://{p}"])
def test_another_users_project_by_a_capital_scheme_or_a_bare_direct_reference_is_refused(tmp_path, capsys,
                                                                                           pip_calls, line):
    project = evil_project(tmp_path)
    req = tmp_path / "req.txt"
    req.write_text(line.format(p=project) + "\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 1: '{project}' belongs to uid 1001, "
        f"another user; {THING_TAIL}")
    assert pip_calls == []


def test_ones_own_project_by_a_direct_reference_and_a_remote_one_go_to_pip(tmp_path, capsys, pip_calls):
    project = tmp_path / "mine"
    project.mkdir()
    req = tmp_path / "req.txt"
    req.write_text(f"x[extra] @ {project}\ny @ FILE://{project}\nz @ HTTPS://example.org/z-1.0.tar.gz\n")
    assert created(tmp_path, req) == 1
    assert pip_calls == [str(req)]
