"""environment.json `project.dirty` ("(clean)" on the page) is checked only against the set's
other records (run.json `code.dirty`, `workdir.git.dirty`, an empty source.diff): a dirty set
relabelled clean in every one of them passes, as nothing outside the set says what the tree
was. docs/record-fields.md says so, and that the page's rebuild line uses the stored diff."""

from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "docs" / "record-fields.md"


def _row(field: str) -> list[str]:
    text = TABLE.read_text(encoding="utf-8")
    section = text[text.index("## `environment.json`"):].split("\n## ", 1)[0]
    line = next(line for line in section.splitlines() if line.startswith(f"| `{field}` |"))
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_the_dirty_flag_is_said_to_be_derived_no_further_than_the_records_agreeing():
    _, page, derived_by, why = _row("project.dirty")
    assert page.startswith("yes")
    assert why.startswith("not derived beyond the records agreeing")
    assert "relabelled clean in each of them, `source.diff` emptied, passes" in why


def test_the_rebuild_line_is_said_to_use_the_stored_diff():
    why = _row("project.dirty")[3]
    assert "the page's rebuild line is `git checkout <commit> && git apply --binary` of the stored diff " \
           "(`project.diff.file`, source.diff, whose size and hash verify compares with the file)" in why
