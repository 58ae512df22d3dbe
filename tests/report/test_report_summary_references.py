"""A summary.json whose comparison names a configuration its `configs` lacks ended the report
in `error: KeyError: 'n1_poolX'` (exit 1), naming neither the file nor the key. The summary's
references to its configurations are checked where it is read (one line, exit 2), and a
cross-reference the reads do not check is never printed as a bare KeyError."""

import json
import sys
from pathlib import Path

import pytest

from sacscale.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set, edit_record  # noqa: E402

SET = "h200x1_shared_short"


def _comparison_names(key: str, name: str):
    return lambda summary: summary["comparisons"][0].update({key: name})


_EDITS = {
    "compared": (_comparison_names("compared", "n1_poolX"), "comparisons[0].compared 'n1_poolX'"),
    "baseline": (_comparison_names("baseline", "n1_poolX"), "comparisons[0].baseline 'n1_poolX'"),
    "order": (lambda summary: summary["order"].append("n1_poolX"), "order[2] 'n1_poolX'"),
}


@pytest.mark.parametrize("edit, where", _EDITS.values(), ids=_EDITS.keys())
def test_a_configuration_the_summary_lacks_is_named_with_its_file(tmp_path, capsys, edit, where):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, "summary.json", edit)
    out = tmp_path / "out"
    assert main(["report", "--run-set", str(root), "--output-dir", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale report: error: {root / 'summary.json'}: not a summary aggregate wrote ({where}: not a "
        "configuration of its configs); run aggregate again")
    assert not out.exists()


def test_an_unchecked_reference_is_not_a_bare_key_error(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)

    def lacks(**inputs):
        raise KeyError("n1_poolX")

    monkeypatch.setattr("sacscale.report.build.write_report", lacks)
    assert main(["report", "--run-set", str(root), "--output-dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("sacscale report: error: the report's records name 'n1_poolX', which the record it looks "
                           "that up in lacks: not records this pipeline wrote together; `sacscale verify` on the set "
                           "names which one differs"), err
    assert json.loads((root / "summary.json").read_text())["comparisons"]  # the set itself untouched
