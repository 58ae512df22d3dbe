"""A reference override's value is read as Hydra's override grammar reads it: a sweep of two
lists or casts (`[1],[inf]`) was taken as one list from its first bracket to its last, and a
Hydra escape (`a\\(b`) or an escaped quote (`'it\\'s'`) left a bracket or quote open, so an inf
after them was never judged. Every number in the value is now judged, and a value whose
brackets or quotes do not pair (Hydra refuses it too) is one line naming the override."""

import sys

import pytest

from sacscale.cli import main
from sacscale.pipeline.overrides import check_reference_override
from sacscale.pipeline.plan_values import PlanError

WHERE = "run_configs.u1.overrides.algo.gamma"


@pytest.mark.parametrize("value", ["[1],[inf]", "float(1),float(inf)", "{a: 1},{b: nan}", r"[a\(b, inf]",
                                   r"['it\'s', inf]", r'["a\"b", nan]', r"[a\,b, 1e400]", r"[a\[b, inf]",
                                   "[1,2],3,[4,'inf']", "choice([1],[2, nan])"])
def test_a_non_finite_number_after_a_sweep_or_an_escape_is_refused(value):
    with pytest.raises(PlanError) as exc:
        check_reference_override("algo.gamma", value, WHERE)
    assert str(exc.value) == f"{WHERE}: {value!r} is not a finite number"


@pytest.mark.parametrize("value, problem", [
    ("[1, inf", "the '[' at character 1 is never closed"),
    ("[1,2]]", "the ']' at character 6 closes no bracket"),
    ("[1,(2]", "the ']' at character 6 closes the '(' at character 4"),
    (r"[a\\(b, inf]", "the ']' at character 12 closes the '(' at character 5"),  # `\\` is a backslash: `(` opens
    ("'abc", "the quote ' at character 1 is never closed"),
])
def test_a_value_whose_brackets_do_not_pair_is_refused(value, problem):
    with pytest.raises(PlanError) as exc:
        check_reference_override("algo.gamma", value, WHERE)
    assert str(exc.value) == f"{WHERE}: {value!r} is not a value Hydra's override grammar reads: {problem}"


@pytest.mark.parametrize("value", ["[256, 128]", "{lr: 3e-4, eps: 1e-8}", "choice(0.9,0.99)", "1e-300", "-0.5",
                                   "float(0.99)", "'[a, b]'", "interval(0, 1)", "[a:b, c]", "[[1,2],[3,4]]",
                                   "'inf-mode'", "info", "nano", r"[a\,inf]", r"a\(b", "'a(b'", r"['it\'s', 0.9]",
                                   "[1],[2]", "float(1),float(2)"])
def test_legitimate_hydra_values_pass(value):
    check_reference_override("algo.gamma", value, WHERE)


@pytest.mark.parametrize("override, says", [
    ("algo.gamma=[1],[inf]", "--override 'algo.gamma=[1],[inf]': '[1],[inf]' is not a finite number"),
    ("algo.gamma=[0.9", "--override 'algo.gamma=[0.9': '[0.9' is not a value Hydra's override grammar reads: "
                        "the '[' at character 1 is never closed"),
])
def test_train_reference_refuses_the_value(tmp_path, capsys, override, says):
    argv = ["train-reference", "--reference-python", sys.executable, "--log-dir", str(tmp_path / "run"),
            "--override", override]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"sacscale train-reference: error: {says}"
    assert not (tmp_path / "run").exists()
