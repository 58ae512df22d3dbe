"""A value verify refuses in environment.json (a variable's setting verify-env records from
where snakemake runs) was recorded by verify-env with exit 0, and only the set's verify refused
it, after all the training. verify-env now asks verify's own rule of the record it is about to
write and stops, naming the variable, exit 2, with nothing written; NCCL's documented network
name for the aws-ofi-nccl plugin ("AWS Libfabric") is recorded and verifies."""

import json
import os
import subprocess
import sys

from sacscale.evidence.environment_text import recorded_value_problems

CLAIM = "Two GPUs give a 9.9x speed-up over one"


def _verify_env(tmp_path, **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")} | variables
    out, diff = tmp_path / "environment.json", tmp_path / "source.diff"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify-env", "--output", str(out),
                           "--diff-output", str(diff)], capture_output=True, text=True, timeout=300, env=env)
    return proc, out, diff


def test_a_setting_verify_refuses_stops_verify_env_naming_it(tmp_path):
    proc, out, diff = _verify_env(tmp_path, NCCL_NET=CLAIM)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"sacscale verify-env: error: environment.json: env NCCL_NET: '{CLAIM}' is not a "
                                  "variable's setting (")
    assert "verify refuses it, so the set would fail after all its training" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and not out.exists() and not diff.exists()


def test_a_sentence_after_a_number_stops_verify_env_too(tmp_path):
    proc, out, _ = _verify_env(tmp_path, NCCL_NVLS_ENABLE=f"0 {CLAIM}")
    assert proc.returncode == 2 and "env NCCL_NVLS_ENABLE: '0 Two GPUs" in proc.stderr and not out.exists()


def test_the_aws_ofi_nccl_network_is_recorded_and_passes_verify_s_rule(tmp_path):

    proc, out, _ = _verify_env(tmp_path, NCCL_NET="AWS Libfabric")
    assert proc.returncode == 0, proc.stderr
    env = json.loads(out.read_text())
    assert env["env"] == {"NCCL_NET": "AWS Libfabric"} and recorded_value_problems(env) == []
