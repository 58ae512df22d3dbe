"""environment.json reads the GPUs twice (torch and nvidia-smi, the same machine) and names
the interpreter the pipeline's `sacscale` runs under, which also ran each run's wrapper
(run.json `python`): a copy of a set with one side rewritten, its manifest made again,
passed."""

import pytest
from set_copies import records_after_edit


SET = "h200x1_shared_recheck"
RUN = "shared_r1_n2_shared"


def _verify_after(tmp_path, rel, edit):
    return records_after_edit(tmp_path, rel, edit, SET)


def test_a_gpu_torch_names_that_nvidia_smi_does_not_list_is_named(tmp_path):
    records = _verify_after(tmp_path, "environment.json",
                            lambda env: env["torch"]["gpus"][0].update(name="NVIDIA A100-SXM4-80GB"))
    assert "set: GPUs: environment.json torch.gpus names 'NVIDIA A100-SXM4-80GB' beyond what nvidia.gpus lists on " \
           "the same machine (nvidia-smi: 1 x NVIDIA H200)" in records, records


def test_a_mig_instance_torch_names_otherwise_than_cuda_does_is_named(tmp_path):
    name = "NVIDIA H200 MIG (one of 8 H200 over NVLink; the run used all 8)"
    records = _verify_after(tmp_path, "environment.json", lambda env: env["torch"]["gpus"][0].update(name=name))
    assert f"set: GPUs: environment.json torch.gpus names {name!r} beyond what nvidia.gpus lists on the same " \
           "machine (nvidia-smi: 1 x NVIDIA H200) (a MIG instance is named '<GPU> MIG <profile>', e.g. " \
           "'<GPU> MIG 1g.10gb')" in records, records


@pytest.mark.parametrize("profile, named", [
    ("1g.18gb", False), ("1g.18gb+me", False), ("1c.3g.71gb", False), ("7g.141gb", False),
    ("1g.18gb extra", True), ("9g.18gb", True), ("1g", True), ("", True), ("1G.18GB", True)])
def test_a_mig_instance_is_its_gpus_name_and_a_profile(profile, named):
    from sacscale.evidence.shared_facts import gpu_problems

    env = {"torch": {"gpus": [{"name": f"NVIDIA H200 MIG {profile}"}]}, "nvidia": {"gpus": [{"name": "NVIDIA H200"}]}}
    assert bool(gpu_problems(env)) is named


def test_gpus_torch_reads_among_more_or_as_mig_instances_agree():
    from sacscale.evidence.shared_facts import gpu_problems

    def env(torch_names, smi_names):
        return {"torch": {"gpus": [{"name": n} for n in torch_names]},
                "nvidia": {"gpus": [{"name": n} for n in smi_names]}}
    assert gpu_problems(env(["NVIDIA H100 80GB HBM3"], ["NVIDIA H100 80GB HBM3"] * 4)) == []
    assert gpu_problems(env(["NVIDIA H100 80GB HBM3 MIG 1g.10gb"], ["NVIDIA H100 80GB HBM3"])) == []
    assert gpu_problems(env(["NVIDIA H200", "NVIDIA H200"], ["NVIDIA H200"])) == [
        "set: GPUs: environment.json torch.gpus names 'NVIDIA H200' beyond what nvidia.gpus lists on the same "
        "machine (nvidia-smi: 1 x NVIDIA H200)"]
    assert gpu_problems(env(["NVIDIA H200"], [])) == []  # no nvidia-smi: nothing to compare


def test_a_run_under_another_interpreter_than_the_environment_describes_is_named(tmp_path):
    records = _verify_after(tmp_path, f"runs/{RUN}/run.json", lambda run: run.update(python="/usr/bin/python3"))
    assert f"{RUN}: Python interpreter: environment.json says '/opt/torch/.venv/bin/python3', run.json says " \
           "'/usr/bin/python3'" in records, records
