"""Every CUDA device the plan's probe, the runs' commands and train_meta.json name is a GPU
environment.json lists (torch's list: the GPUs the pipeline's process saw, whose environment
the runs inherit; nvidia-smi's is compared with torch's elsewhere): a set whose every run
trained on GPU 0 passed with `torch.gpus: []` and `nvidia.gpus: []`, and its page said
"GPUs: none visible". A run under its own CUDA_VISIBLE_DEVICES is judged against that list."""

from set_copies import records_after_edit

from sacscale.evidence.shared_facts import gpu_use_problems

SET = "h200x1_shared_short"
WHOSE = "(those torch saw in the pipeline's process, whose environment the runs and the probe inherit)"


def test_a_gpu_set_whose_environment_lists_no_gpu_is_named(tmp_path):
    def no_gpus(env):
        env["torch"]["gpus"], env["nvidia"]["gpus"] = [], []
    records = records_after_edit(tmp_path, "environment.json", no_gpus, SET)
    for says in (f"correctness probe: GPUs: CUDA device 0 (plan.json probe.devices '0,0'), but environment.json "
                 f"torch.gpus lists no GPU {WHOSE}",
                 f"shared_r1_n1_pool7: GPUs: CUDA device 0 (plan.json devices '0'), but environment.json torch.gpus "
                 f"lists no GPU {WHOSE}",
                 f"shared_r1_n2_shared: GPUs: CUDA device 0 (plan.json devices '0,0'), but environment.json "
                 f"torch.gpus lists no GPU {WHOSE}",
                 "set: GPUs: environment.json torch.cuda_devices says 1, torch.gpus lists 0"):
        assert says in records, (says, records)


def test_a_run_on_a_gpu_beyond_those_listed_is_named():
    env = {"torch": {"gpus": [{"name": "NVIDIA H200"}]}, "nvidia": {"gpus": [{"name": "NVIDIA H200"}]}}
    uses = [("plan.json devices", "0,1"), ("train_meta.json devices", ["cuda:0", "cuda:1"])]
    assert gpu_use_problems("r", uses, env) == [
        f"r: GPUs: CUDA device 1 (plan.json devices '0,1'), but environment.json torch.gpus lists 1 GPU(s) {WHOSE}"]
    assert gpu_use_problems("r", [("plan.json devices", "cpu,cpu")], {"torch": {"gpus": []}}) == []  # CPU only
    assert gpu_use_problems("r", [("plan.json devices", "0")], {"torch": {}}) == [
        "r: GPUs: CUDA devices used (plan.json devices '0'), but environment.json torch.gpus is absent, not the list "
        "of GPUs torch saw"]


def test_a_run_under_its_own_visible_devices_is_judged_against_them():
    # two GPUs on the machine; the pipeline saw one of them (its own CUDA_VISIBLE_DEVICES)
    env = {"torch": {"gpus": [{"name": "NVIDIA H200"}]}, "env": {"CUDA_VISIBLE_DEVICES": "0"},
           "nvidia": {"gpus": [{"name": "NVIDIA H200"}, {"name": "NVIDIA H200"}]}}
    uses = [("plan.json devices", "0")]
    assert gpu_use_problems("r", uses, env, visible="1") == []  # GPU 1 of the machine, which nvidia-smi lists
    assert gpu_use_problems("r", uses, env, visible="MIG-4a1b2c3d-0000-1111-2222-333344445555") == []
    assert gpu_use_problems("r", uses, env, visible="3") == [
        "r: GPUs: CUDA device 0 (plan.json devices '0') is GPU 3 of its CUDA_VISIBLE_DEVICES '3', but "
        "environment.json lists 2 GPU(s) on the machine"]
    assert gpu_use_problems("r", [("plan.json devices", "0,1")], env, visible="1") == [
        "r: GPUs: CUDA device 1 (plan.json devices '0,1'), but its CUDA_VISIBLE_DEVICES '1' makes 1 visible"]
