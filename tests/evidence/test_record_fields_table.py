"""docs/record-fields.md names every field of every record of a set made by this code, and
says what derives it: a key of a record that no row of its table names fails here, and so
does a row that names no key of the sets walked (a stale row). A field added to a record
needs its row, and with it an answer to "what derives it?"."""

import json
import re
from pathlib import Path

import pytest
from set_copies import copy_committed_set, current_copy

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "docs" / "record-fields.md"
# the committed set made by this code, and an older one made current (its evidence.json gains
# the page format this code records; the other records are as the pipeline wrote them)
CURRENT = "h200x1_shared_recheck"
MADE_CURRENT = "h200x1_shared_short"
WILDCARDS = ("*", "**", "[]")
_HEADING = re.compile(r"^## `([^`]+)`\s*$")
_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def read_table(text: str) -> dict[str, list[str]]:
    """{record path pattern: [field pattern, ...]} from the document's tables, each under a
    heading naming its record (`## \\`eval/<run>.json\\``)."""
    tables: dict[str, list[str]] = {}
    record = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            record = heading.group(1)
            tables[record] = []
        elif line.startswith("## "):
            record = None
        elif record is not None and (row := _ROW.match(line)):
            tables[record].append(row.group(1))
    return tables


SHOWN_LIST = "## Shown on the report page, and nothing derives it"


def shown_untrusted(text: str) -> list[tuple[str, str]]:
    """(record, field) of every row the page shows (`yes`) that nothing derives (its last
    column says so)."""
    out, record = [], None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading or line.startswith("## "):
            record = heading.group(1) if heading else None
        elif record is not None and _ROW.match(line):
            field, page, derived_by, why = (cell.strip() for cell in line.strip().strip("|").split("|"))
            if page.startswith("yes") and why.startswith("not derived"):
                out.append((record, field.strip("`")))
    return out


def tokens(pattern: str) -> list[str]:
    """`a.b[].*` -> ['a', 'b', '[]', '*']."""
    out = []
    for part in pattern.split("."):
        name, brackets = re.fullmatch(r"([^\[\]]*)((?:\[\])*)", part).groups()
        out += ([name] if name else []) + ["[]"] * (len(brackets) // 2)
    return out


def _matches(toks: list[str], keys: list) -> bool:
    if not toks:
        return not keys
    head, rest = toks[0], toks[1:]
    if head == "**":
        return any(_matches(rest, keys[i:]) for i in range(1, len(keys) + 1))
    if not keys:
        return False
    key = keys[0]
    one = (isinstance(key, int) if head == "[]" else isinstance(key, str) and head in ("*", key))
    return one and _matches(rest, keys[1:])


def covers(toks: list[str], keys: list, empty: bool) -> bool:
    """Whether a row names the key path; an empty list or object is named by the row of its
    items (`x[]`, `x.*`)."""
    if _matches(toks, keys):
        return True
    return empty and any(toks[i] in WILDCARDS and _matches(toks[:i], keys) for i in range(len(toks)))


def key_paths(value, keys=()):
    """(key path, whether it ends in an empty list or object) of every leaf."""
    if isinstance(value, (dict, list)) and value:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, sub in items:
            yield from key_paths(sub, (*keys, key))
    else:
        yield list(keys), isinstance(value, (dict, list))


def shown(keys: list) -> str:
    """A key path as the document writes one: list items as []."""
    text = ""
    for key in keys:
        text += "[]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


def record_files(root: Path, record: str) -> list[Path]:
    return sorted(root.glob(record.replace("<run>", "*")))


def check_set(root: Path, tables: dict[str, list[str]], used: set) -> list[str]:
    """Each key path of the set's records that no row names; `used` collects the rows that
    name one."""
    unnamed = {}
    for record, rows in tables.items():
        parsed = [(row, tokens(row)) for row in rows]
        for path in record_files(root, record):
            for keys, empty in key_paths(json.loads(path.read_text())):
                hits = [row for row, toks in parsed if covers(toks, keys, empty)]
                used.update((record, row) for row in hits)
                if not hits:
                    unnamed.setdefault(f"{record}: {shown(keys)}", path.relative_to(root.parent).as_posix())
    return [f"{where} (in {example}): no row of docs/record-fields.md names it" for where, example in unnamed.items()]


def stale_rows(tables: dict[str, list[str]], used: set) -> list[str]:
    return [f"{record}: row `{row}` names no field of the sets walked: stale"
            for record, rows in tables.items() for row in rows if (record, row) not in used]


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> list[Path]:
    made = current_copy(tmp_path_factory.mktemp("made_current"), MADE_CURRENT)
    return [REPO / "results" / CURRENT, made]


RECORDS = ("plan.json", "environment.json", "model.json", "correctness.json", "summary.json", "evidence.json",
           "manifest.json", "verify.json", "eval/<run>.json", "metrics/<run>.json", "runs/<run>/run.json",
           "runs/<run>/train_meta.json")


def test_every_record_has_a_table():
    assert sorted(read_table(TABLE.read_text())) == sorted(RECORDS)


def test_every_field_has_a_row_and_every_row_a_field(sets):
    tables = read_table(TABLE.read_text())
    used: set = set()
    problems = [p for root in sets for p in check_set(root, tables, used)]
    assert all(record_files(root, record) for root in sets for record in RECORDS)  # every record was walked
    problems += stale_rows(tables, used)
    assert not problems, "\n".join(problems)


def test_the_urgent_list_names_every_shown_field_nothing_derives():
    """The list at the top, of what the page shows on trust, is the tables' own."""
    text = TABLE.read_text()
    listed = text[text.index(SHOWN_LIST):].split("\n## ", 1)[0]
    missing = [f"{record}: {field}" for record, field in shown_untrusted(text) if f"`{field}`" not in listed]
    assert not missing, f"not in the list under {SHOWN_LIST!r}: {missing}"


def test_a_field_added_to_a_record_is_named(tmp_path):
    root = copy_committed_set(tmp_path, CURRENT)
    meta = root / "runs" / "shared_r1_n2_shared" / "train_meta.json"
    record = json.loads(meta.read_text())
    record["ranks_agree"] = [{"rank": 0, "agrees": True}]
    record["config"]["new_option"] = 1
    meta.write_text(json.dumps(record))
    problems = check_set(root, read_table(TABLE.read_text()), set())
    assert problems == [
        "runs/<run>/train_meta.json: config.new_option (in h200x1_shared_recheck/runs/shared_r1_n2_shared/"
        "train_meta.json): no row of docs/record-fields.md names it",
        "runs/<run>/train_meta.json: ranks_agree[].rank (in h200x1_shared_recheck/runs/shared_r1_n2_shared/"
        "train_meta.json): no row of docs/record-fields.md names it",
        "runs/<run>/train_meta.json: ranks_agree[].agrees (in h200x1_shared_recheck/runs/shared_r1_n2_shared/"
        "train_meta.json): no row of docs/record-fields.md names it"]


def test_a_row_that_names_nothing_is_stale():
    tables = {"model.json": ["sha256", "summary.removed_field", "summary.opt.*"]}
    used: set = set()
    check_set(REPO / "results" / CURRENT, tables, used)
    assert stale_rows(tables, used) == ["model.json: row `summary.removed_field` names no field of the sets walked: "
                                        "stale"]


@pytest.mark.parametrize("pattern, keys, empty, named", [
    ("a.b", ["a", "b"], False, True),
    ("a.*", ["a", "b"], False, True),
    ("a.*", ["a", "b", "c"], False, False),
    ("a[].b", ["a", 3, "b"], False, True),
    ("a[].b", ["a", "x", "b"], False, False),
    ("a.**", ["a", "b", 0, "c"], False, True),
    ("a.**", ["a"], False, False),
    ("a[]", ["a"], True, True),  # an empty list: named by the row of its items
    ("a.*", ["a"], True, True),
    ("a.b", ["a"], True, False),
    ("a.b[][]", ["a", "b", 0, 1], False, True),
])
def test_patterns(pattern, keys, empty, named):
    assert covers(tokens(pattern), keys, empty) is named


def test_no_row_waits_for_a_derivation():
    """A row says what derives its field, or why nothing does; none promises one."""
    assert "being added" not in TABLE.read_text(encoding="utf-8")
