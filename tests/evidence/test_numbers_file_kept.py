"""The report's numbers.json in a set made after the report stage began writing it: deleted,
the set passed with the line "a set made before the report wrote one"; its format as `true`
or `1.0` (the writer writes the integer 1) passed as `== 1`. Each is named."""

import json

import pytest
from set_copies import report_file

from sacscale.evidence.verify import verify


def test_a_deleted_numbers_file_of_a_newer_set_is_named(work):
    report_file(work, "numbers.json").unlink()
    problems = verify(work).problems()
    assert (f"derived: reports/{work.name}: no numbers.json, which the report stage writes with every page; "
            "evidence.json report_page and plan.json evaluation say the set was made after it began to"
            ) in problems, problems


@pytest.mark.parametrize("value", [True, 1.0])
def test_a_numbers_format_of_another_type_is_named(work, value):
    path = report_file(work, "numbers.json")
    numbers = json.loads(path.read_text())
    path.write_text(json.dumps({**numbers, "format": value}))
    problems = verify(work).problems()
    assert f"derived: reports/{work.name}/numbers.json: not a numbers file of format 1" in problems, problems
