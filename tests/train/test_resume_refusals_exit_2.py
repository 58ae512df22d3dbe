"""Every refusal of a `train --resume` checkpoint or run folder made before the run starts is
bad input: exit 2, its one line, the run folder untouched. Only the crafted tensor's refusal
exited 2; a checkpoint missing a field, not a sacscale checkpoint, a flag that differs from
the run's, a missing rank state, a folder with no train_meta.json ... exited 1, the status
of a run that failed."""

import shutil

import pytest
from resume_copies import edit_final, trained_run
import torch

DONE = 2  # the trained run's iterations


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished run, trained once for the module: each case refuses a crafted copy."""
    return trained_run(tmp_path_factory.mktemp("refusals"), DONE)


def _edit_final(edit):
    return lambda run: edit_final(run, edit)


def _final(run):
    return run / "checkpoints" / "final.pt"


def _other_model(run):
    (run.parent / "other_model.xml").write_text("<mujoco/>")
    _edit_final(lambda c: c.__setitem__("model_sha256", "0" * 64))(run)


def _nan_alpha(c):
    name = next(k for k, v in c["learner_state"].items() if v.is_floating_point())
    c["learner_state"][name] = torch.full_like(c["learner_state"][name], float("nan"))


def _no_file(name):
    return lambda run: (run / name).unlink()


def _garbage(name, text):
    return lambda run: (run / name).write_text(text)


NOT_WRITTEN = "not a checkpoint the trainer wrote"
# case: (craft the copy, extra flags, the line's text after `sacscale train: error: `)
CASES = {
    "field_missing": (_edit_final(lambda c: c.pop("train_config")), [],
                      lambda r: f"--resume: {_final(r)}: {NOT_WRITTEN} (its 'train_config' is missing)"),
    "world_size_out_of_range": (_edit_final(lambda c: c.__setitem__("world_size", 10**9)), [],
                                lambda r: f"--resume: {_final(r)}: {NOT_WRITTEN} (its world_size 1000000000 is not "
                                          "1..64)"),
    "not_sacscale": (lambda r: torch.save({"format": "someone-elses"}, _final(r)), [],
                     lambda r: f"{_final(r)}: not a sacscale checkpoint"),
    "no_checkpoint": (_no_file("checkpoints/final.pt"), [], lambda r: f"{_final(r)}: no checkpoint there"),
    "not_a_zip": (_garbage("checkpoints/final.pt", "not torch"), [],
                  lambda r: f"{_final(r)}: not a readable torch checkpoint (BadZipFile: File is not a zip file)"),
    "policy_only_format": (_edit_final(lambda c: c.__setitem__("version", 1)), [],
                           lambda r: f"--resume {r}: its checkpoint (format version 1) holds the policy only, not the "
                                     "learning state; it cannot be resumed"),
    "policy_only_copy": (_edit_final(lambda c: c.__setitem__("policy_only_of", {})), [],
                         lambda r: f"--resume {r}: its checkpoint is a policy-only copy (a pipeline run's: its "
                                   "learning state was moved to logs/<run set>/learning_state/<run>); to resume it, "
                                   f"copy {r} to a folder of your own, copy logs/<run set>/learning_state/<run>/"
                                   "checkpoints/* into the copy's checkpoints/ (replacing any final.pt) and resume "
                                   "the copy"),
    "tensor_nan": (_edit_final(_nan_alpha), [], lambda r: f"--resume: {_final(r)}: {NOT_WRITTEN} (learner_state."),
    "saved_option_out_of_range": (_edit_final(lambda c: c["train_config"].__setitem__("num_envs", -4)), [],
                                  lambda r: f"--resume {r}: the resumed run's options (its checkpoint's, with this "
                                            "command's): --num-envs must be positive, got -4"),
    "flag_differs": (lambda r: None, ["--batch-size", "32"],
                     lambda r: "--resume: --batch-size 32 differs from the resumed run's 16; a resumed run keeps what "
                               "it learns with"),
    "iterations_not_larger": (lambda r: None, ["--iterations", str(DONE)],
                              lambda r: f"--resume {r}: its checkpoint is at iteration {DONE}; give --iterations "
                                        f"larger than that (the new total), got {DONE}"),
    "log_dir_differs": (lambda r: None, ["--log-dir", "elsewhere"],
                        lambda r: f"--resume {r} continues in its own directory; --log-dir elsewhere differs"),
    "other_model": (_other_model, ["--model", "MODEL"],
                    lambda r: f"--model {r.parent / 'other_model.xml'} is not the model the run trained on "
                              "(sha256 000000000000...)"),
    "rank_state_missing": (_no_file("checkpoints/rank0.pt"), [],
                           lambda r: f"--resume {r}: {r / 'checkpoints' / 'rank0.pt'} is missing"),
    "no_train_meta": (_no_file("train_meta.json"), [],
                      lambda r: f"--resume {r}: not a run directory (no train_meta.json)"),
    "train_meta_not_json": (_garbage("train_meta.json", "[1, 2"), [],
                            lambda r: f"{r / 'train_meta.json'}: not a train_meta.json this trainer wrote ("),
}


def _contents(run):
    return {p.relative_to(run): p.read_bytes() if p.is_file() else None for p in sorted(run.rglob("*"))}


@pytest.mark.parametrize("case", CASES)
def test_a_resume_refused_before_the_run_starts_exits_2_with_its_line(trained, tmp_path, capsys, case):
    from sacscale.cli import main

    craft, flags, says = CASES[case]
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    craft(run)
    before = _contents(run)
    flags = [str(run.parent / "other_model.xml") if f == "MODEL" else f for f in flags]
    if "--iterations" not in flags:
        flags += ["--iterations", str(DONE + 2)]
    capsys.readouterr()
    code = main(["train", "--resume", str(run), *flags])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"sacscale train: error: {says(run)}"), err
    assert _contents(run) == before  # nothing written into the run folder
    assert not (tmp_path / ".run.trainer-lock").exists()
