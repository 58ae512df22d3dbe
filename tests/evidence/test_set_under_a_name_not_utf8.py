"""A legitimate set lying under a folder whose bytes are not UTF-8 (`$'/tmp/\\xff\\xfedir'`).
verify ran on: the event reader refused each run's events, then MuJoCo's bindings refused the
model's path with a TypeError, reported as "unexpected structure in the set's JSON", which
stopped the remaining checks, the name shown as surrogates (`\\udcff`); under the C locale
the cure given was a UTF-8 locale, which led there. Now the set is refused at the start with
the cure (rename it), under any locale. A file inside a set with such a name is shown as the
shell writes it, with the cure; an error raised outside the record-reading code is not
blamed on the set's JSON."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from set_copies import copy_committed_set

from sacscale.evidence.verify import verify
from sacscale.held_names import NameNotText
from sacscale.task import g1_model

NOT_UTF8 = "not valid UTF-8 (undecodable bytes in the name): the records are UTF-8; rename it"
SET = "h200x1_shared_short"
ENCODINGS = {
    "a UTF-8 locale": {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"},
    "the C locale": {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
}


def run_verify(root, settings: dict, cwd=None) -> tuple[int, list[str], str]:
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", os.fsencode(root)], cwd=cwd,
                          capture_output=True, env={**os.environ, **settings}, timeout=900)
    return (done.returncode, done.stderr.decode("utf-8", "backslashreplace").strip().splitlines(),
            done.stdout.decode("utf-8", "backslashreplace"))


@pytest.fixture(scope="module")
def placed(tmp_path_factory) -> Path:
    """The committed set and its report copied under `<tmp>/\\xff\\xfedir`; its results/SET."""
    folder = Path(os.fsdecode(os.fsencode(tmp_path_factory.mktemp("under")) + b"/\xff\xfedir"))
    return copy_committed_set(folder, SET)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_set_under_a_folder_not_utf8_is_refused_at_the_start_with_the_cure(placed, encoding):
    shown = os.fsencode(placed).decode("utf-8", "surrogateescape").replace("\udcff\udcfe", "\\xff\\xfe")
    assert run_verify(placed, ENCODINGS[encoding]) == (2, [f"sacscale verify: error: root '{shown}' is {NOT_UTF8}"],
                                                       "")


def test_a_set_named_from_a_working_folder_not_utf8_is_refused_so(placed):
    shown = os.fsencode(placed).decode("utf-8", "surrogateescape").replace("\udcff\udcfe", "\\xff\\xfe")
    assert run_verify(SET, ENCODINGS["a UTF-8 locale"], cwd=placed.parent) == (2, [
        f"sacscale verify: error: root '{SET}' is '{shown}' (joined to the working folder), {NOT_UTF8}"], "")


def test_the_model_of_such_a_set_is_named_not_blamed_on_the_json(placed):
    """verify's own checks (the pipeline's code, not the CLI) name the model's path; the
    structure line no longer carries MuJoCo's TypeError as the JSON's."""
    problems = verify(placed).problems()
    model = [p for p in problems if "g1_walk_flat.mjb" in p]
    shown = os.fsencode(placed).decode("utf-8", "surrogateescape").replace("\udcff\udcfe", "\\xff\\xfe")
    assert model == [f"record: model: model/g1_walk_flat.mjb: its path '{shown}/model/g1_walk_flat.mjb' "
                     f"is {NOT_UTF8}"], problems
    assert not any("from_binary_path" in p or "\udcff" in p for p in problems), problems


def test_mujoco_is_never_handed_a_name_not_utf8(tmp_path):
    model = Path(os.fsdecode(os.fsencode(tmp_path) + b"/m\xff.mjb"))
    with pytest.raises(NameNotText) as raised:
        g1_model.load_model(model)
    assert str(raised.value) == f"the model file '{tmp_path}/m\\xff.mjb' is {NOT_UTF8}"


def test_a_file_inside_the_set_not_utf8_is_shown_as_the_shell_writes_it(work):
    name = os.fsencode(work) + b"/runs/shared_r1_n1_pool7/\xff\xfe.txt"
    open(name, "wb").close()
    assert run_verify(work, ENCODINGS["a UTF-8 locale"])[:2] == (1, [
        f"sacscale verify: error: {work}: the file 'runs/shared_r1_n1_pool7/\\xff\\xfe.txt' is {NOT_UTF8}"])


def raising_outside_the_records(path):
    raise TypeError("incompatible function arguments")


def test_an_error_raised_outside_the_record_reading_code_is_not_blamed_on_the_json(work, monkeypatch):
    monkeypatch.setattr(g1_model, "load_model", raising_outside_the_records)
    structure = verify(work).structure
    assert structure == ["verify stopped: an unexpected error in test_set_under_a_name_not_utf8."
                         "raising_outside_the_records (TypeError: incompatible function arguments); the checks "
                         "after it were not done"], structure
