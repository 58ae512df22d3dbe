"""`prepare-model --expect-sha256` that the prepared model does not match. Before: the model
was removed but the output folders made for it stayed, empty, and the line lacked `error:`.
Now the folders it made go too (only those: an existing folder stays) and the line is
`sacscale prepare-model: error: ...` as every other refusal's."""

from cli_runs import REPO, SET, sacscale

MODEL = REPO / "results" / SET / "model" / "g1_walk_flat.mjb"
SHA = "6429381f6ce1bfac8dd7bb5ba88b196fa7e70029ab75b6678a8d506441e45560"  # the task model, re-saved
PIN = "a" * 64


def mismatched(out_dir):
    done = sacscale("prepare-model", "--from-mjb", MODEL, "--output-dir", out_dir, "--expect-sha256", PIN,
                    "--steps", "1", "--num-envs", "2")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (f"sacscale prepare-model: error: {out_dir / 'g1_walk_flat.mjb'} has SHA-256 "
                                   f"{SHA}, expected {PIN}")
    return done


def test_a_pin_mismatch_removes_the_folders_it_made(tmp_path):
    mismatched(tmp_path / "pm5" / "deep")
    assert list(tmp_path.iterdir()) == []


def test_a_pin_mismatch_keeps_a_folder_that_was_there(tmp_path):
    (tmp_path / "pm5" / "keep.txt").parent.mkdir()
    (tmp_path / "pm5" / "keep.txt").write_text("x\n")
    mismatched(tmp_path / "pm5" / "deep")
    assert sorted(p.name for p in (tmp_path / "pm5").iterdir()) == ["keep.txt"]
