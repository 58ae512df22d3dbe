"""A code record that contradicts itself: environment.json `project` and `workdir.git`, and
each run.json `code`, carry git's `error` only where git found no checkout (pipeline.environment.git_state),
and then no commit and no dirty state. A record holding both was edited: a set made from
code outside any checkout relabelled a checkout's commit, with the error left beside it."""

from __future__ import annotations


def _stated(record: dict) -> list[str]:
    said = []
    if record.get("commit") is not None:
        said.append(f"commit {str(record['commit'])[:12]!r}")
    if record.get("dirty") is not None:
        said.append(f"dirty {record['dirty']!r}")
    if record.get("repository") is True:
        said.append("repository true")
    return said


def git_error_problems(records: list[tuple[str, object]]) -> list[str]:
    """(field, record) pairs: each record with git's error beside a commit, a dirty state or
    a repository."""
    problems = []
    for field, record in records:
        if not isinstance(record, dict) or not record.get("error"):
            continue
        stated = _stated(record)
        if stated:
            problems.append(f"{field}: error {str(record['error'])[:60]!r} (git found no checkout) beside "
                            f"{', '.join(stated)}, which git gives only in a checkout: the record was edited")
    return problems
