"""`prepare-model` judges every output before it builds anything: `--json` naming a folder
(or the output folder itself) was refused only after the model was built, timed and
saved, the .mjb and its folder left behind."""

from cli_runs import one_line, sacscale


def refused(tmp_path, *argv):
    return sacscale("prepare-model", "--steps", "1", "--num-envs", "2", *argv)


def test_a_summary_named_as_an_existing_folder_is_refused_before_the_build(tmp_path):
    (tmp_path / "jd").mkdir()
    out = tmp_path / "pm"
    one_line(refused(tmp_path, "--output-dir", out, "--json", tmp_path / "jd"),
             f"sacscale prepare-model: error: --json {tmp_path / 'jd'}: is a folder, not a file")
    assert not out.exists()


def test_the_summary_and_the_output_folder_at_one_path_are_refused(tmp_path):
    out = tmp_path / "pm"
    one_line(refused(tmp_path, "--output-dir", out, "--json", out),
             f"--json {out}: --output-dir {out} is there or inside it, so this cannot be a file; give each "
             "output a name of its own")
    assert not out.exists()


def test_a_file_on_the_way_to_an_output_is_named_before_the_build(tmp_path):
    (tmp_path / "afile").write_text("x\n")
    out = tmp_path / "pm"
    one_line(refused(tmp_path, "--output-dir", out, "--json", tmp_path / "afile" / "m.json"),
             f"--json {tmp_path / 'afile' / 'm.json'}: {tmp_path / 'afile'} on its way is a plain file, not a folder")
    assert not out.exists()
    one_line(refused(tmp_path, "--output-dir", tmp_path / "afile"),
             f"--output-dir {tmp_path / 'afile'}: is a plain file, not a folder")
    assert (tmp_path / "afile").read_text() == "x\n"
