"""A set made from code outside any checkout recorded the rebuild command
`git checkout None && git apply --binary source.diff`; without a commit it records none."""

from sacscale.pipeline.environment import write_source_diff


def test_code_outside_any_checkout_records_no_rebuild_command(tmp_path):
    project = {"path": str(tmp_path), "repository": False, "error": "fatal: not a git repository"}
    info = write_source_diff(project, tmp_path / "source.diff")
    assert info["apply"] is None
    assert info["bytes"] == 0 and (tmp_path / "source.diff").read_bytes() == b""
