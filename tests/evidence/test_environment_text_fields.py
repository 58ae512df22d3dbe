"""environment.json's text fields that the page shows as they are: a sentence put into the
lscpu table, the learner module's path or its import error, cuDNN's, CUDA's or NCCL's
version, or an NCCL variable's name or value verified and showed on the page. Each is held
to what verify-env writes there (in an older set, a note)."""

import json
import shutil
from pathlib import Path

import pytest

from sacscale.evidence.environment_text import environment_text_findings, recorded_value_problems
from sacscale.evidence.written_keys import environment_keys

REPO = Path(__file__).resolve().parents[2]
CLAIM = "Two GPUs give a 9.9x speed-up over one"


def _env():
    return json.loads((REPO / "results" / "h200x1_shared_short" / "environment.json").read_text())


def _edited(edit):
    env = _env()
    edit(env)
    return env


def _row_added(line):
    return lambda e: e["cpu"].__setitem__("layout", e["cpu"]["layout"] + "\n" + line)


CASES = {
    "a sentence after the table": (_row_added(CLAIM), "cpu.layout line"),
    "a claim in CPU and '-' columns": (_row_added("9.9x - faster now"), "cpu.layout line"),
    "another header": (lambda e: e["cpu"].__setitem__("layout", CLAIM + "\n0 0 0 0"), "does not start with lscpu"),
    "a sentence for the learner's path": (lambda e: e["learner"].__setitem__("file", CLAIM), "learner.file"),
    "a sentence after cuDNN's number": (lambda e: e["torch"].__setitem__("cudnn", f"91300 ({CLAIM})"), "torch.cudnn"),
    "a sentence before the learner module's path": (
        lambda e: e["learner"].__setitem__("file", f"{CLAIM} /sacscale/learn/learner.py"), "learner.file"),
    "a relative path for the learner's": (
        lambda e: e["learner"].__setitem__("file", "9.9x-faster/sacscale/learn/learner.py"), "learner.file"),
    "a sentence as the learner's import error": (
        lambda e: e["learner"].update(file=None, error=CLAIM), "learner.file is null and learner.error"),
    "a sentence after NCCL's version": (lambda e: e["torch"].__setitem__("nccl", f"2.28.9 ({CLAIM})"), "torch.nccl"),
    "a sentence as NCCL's build suffix": (lambda e: e["torch"].__setitem__("nccl", "2.28.9.+Two.GPUs.give.9.9x"),
                                          "torch.nccl"),
    "a sentence after CUDA's version": (lambda e: e["torch"].__setitem__("cuda", f"13.0 ({CLAIM})"), "torch.cuda"),
    "another script's digits for CUDA's version": (lambda e: e["torch"].__setitem__("cuda", "\u0669\u0669.\u0669"),
                                                    "torch.cuda"),
    "another script's digits in a CPU's row": (_row_added("\u0669 \u0669 \u0669 \u0669"), "cpu.layout line"),
    "a cuDNN number no cuDNN has": (lambda e: e["torch"].__setitem__("cudnn", 10**40), "torch.cudnn"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_sentence_in_a_shown_text_field_is_named(case):
    edit, says = CASES[case]
    problems, notes = environment_text_findings(_edited(edit), strict=True)
    assert len(problems) == 1 and says in problems[0] and not notes, problems
    problems, notes = environment_text_findings(_edited(edit), strict=False)
    assert not problems and len(notes) == 1 and notes[0].endswith("(an older set: not checked)")


def test_what_verify_env_writes_passes_in_every_committed_set():
    for path in sorted((REPO / "results").glob("*/environment.json")):
        assert environment_text_findings(json.loads(path.read_text()), strict=True) == ([], []), path


def _verified_with(tmp_path, sacscale_main, edit):
    """verify of a copy of a current-format set whose environment.json `edit` changed, its
    manifest written again by the project's own command."""
    root = tmp_path / "results" / "h200x1_shared_short"
    shutil.copytree(REPO / "results" / "h200x1_shared_short", root)
    shutil.copytree(REPO / "reports" / "h200x1_shared_short", tmp_path / "reports" / "h200x1_shared_short")
    (root / "environment.json").write_text(json.dumps(_edited(edit), indent=2))
    assert sacscale_main("manifest", root).returncode == 0
    return sacscale_main("verify", root)


def test_verify_names_it_in_a_current_set(tmp_path, sacscale_main):
    done = _verified_with(tmp_path, sacscale_main, lambda e: e["torch"].__setitem__("cudnn", f"91300 ({CLAIM})"))
    assert done.returncode == 1
    assert f"environment.json: torch.cudnn '91300 ({CLAIM})' is not cuDNN's version number" in done.stdout + done.stderr


ENV_CASES = {
    "a sentence after a variable the pipeline sets": (
        lambda e: e["env"].__setitem__("NCCL_NVLS_ENABLE", f"0 {CLAIM}"), "env NCCL_NVLS_ENABLE: '0 Two GPUs"),
    "an invented variable holding a sentence": (
        lambda e: e["env"].__setitem__("NCCL_SUMMARY", CLAIM), "env NCCL_SUMMARY: 'Two GPUs"),
    "a value over 4096 characters": (lambda e: e["env"].__setitem__("NCCL_DEBUG", "x" * 4097), "env NCCL_DEBUG: "),
    "a value that is no string": (lambda e: e["env"].__setitem__("NCCL_DEBUG", [CLAIM]), "env NCCL_DEBUG: "),
    "a sentence with blank look-alikes for spaces": (
        lambda e: e["env"].__setitem__("NCCL_NVLS_ENABLE", "0\u2800Two\u2800GPUs\u28009.9x"), "env NCCL_NVLS_ENABLE: "),
    "a name NCCL never reads": (lambda e: e["env"].__setitem__("NCCL_9.9x faster", "1"), "env 'NCCL_9.9x faster'"),
    "a sentence as a network's name": (lambda e: e["env"].__setitem__("NCCL_NET", CLAIM), "env NCCL_NET: 'Two GPUs"),
    "a network's name with a doubled space": (
        lambda e: e["env"].__setitem__("NCCL_NET", "AWS  Libfabric"), "env NCCL_NET: 'AWS  Libfabric'"),
}


@pytest.mark.parametrize("case", ENV_CASES)
def test_an_nccl_variable_not_of_a_settings_form_is_named(case):
    edit, says = ENV_CASES[case]
    found = environment_keys(_edited(edit))
    assert len(found) == 1 and found[0].startswith(says), found


GENUINE = {  # what a real machine records: none of these is a forgery
    "eight MIG devices": ("CUDA_VISIBLE_DEVICES", ",".join(f"MIG-{i:08x}-1111-2222-3333-4444555566" for i in range(8))),
    "a topology file under a folder with a space": ("NCCL_TOPO_FILE", "/home/a b/topo.xml"),
    "an interface list": ("NCCL_SOCKET_IFNAME", "^docker0,lo"),
    "the aws-ofi-nccl plugin's network, as NCCL documents": ("NCCL_NET", "AWS Libfabric"),
}


@pytest.mark.parametrize("case", GENUINE)
def test_a_genuine_machines_settings_pass(case):
    name, value = GENUINE[case]
    assert environment_keys(_edited(lambda e: e["env"].__setitem__(name, value))) == []


@pytest.mark.parametrize("field, value", [("learner.file", "/home/a b/venv/lib/sacscale/learn/learner.py"),
                                          ("torch.nccl", "2.27.3.+cuda12.9"), ("torch.nccl", "2.28.9.~a0"),
                                          ("torch.cudnn", 91900), ("torch.cudnn", 8902), ("torch.cudnn", 3004000)])
def test_a_genuine_path_with_a_space_and_an_nccl_build_suffix_pass(field, value):
    part, key = field.split(".")
    found = environment_text_findings(_edited(lambda e: e[part].__setitem__(key, value)), strict=True)
    assert found == ([], []), found


def test_the_recorded_variables_of_every_committed_set_pass():
    for path in sorted((REPO / "results").glob("*/environment.json")):
        assert environment_keys(json.loads(path.read_text())) == [], path


def test_verify_names_a_sentence_in_nccl_s_version_and_a_variable(tmp_path, sacscale_main):
    def edit(env):
        env["torch"]["nccl"] = f"2.28.9 ({CLAIM})"
        env["env"]["NCCL_NVLS_ENABLE"] = f"0 {CLAIM}"

    done = _verified_with(tmp_path, sacscale_main, edit)
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert f"environment.json: torch.nccl '2.28.9 ({CLAIM})' is not NCCL's version (numbers joined by dots)" in said
    assert f"environment.json: env NCCL_NVLS_ENABLE: '0 {CLAIM}' is not a variable's setting" in said


@pytest.mark.parametrize("case", [c for c in CASES if "import error" not in c])
def test_verify_env_asks_verify_s_own_rule_of_the_shown_text(case):
    """verify-env refuses what verify would (sacscale.commands.verify_env), through this one
    function; an unusable learner is its own --require-graph-hooks stop."""
    problems = recorded_value_problems(_edited(CASES[case][0]))
    assert len(problems) == 1 and CASES[case][1] in problems[0], problems


@pytest.mark.parametrize("case", ENV_CASES)
def test_verify_env_asks_verify_s_own_rule_of_the_variables(case):
    assert recorded_value_problems(_edited(ENV_CASES[case][0])) == environment_keys(_edited(ENV_CASES[case][0]))


def test_verify_passes_a_set_recorded_with_the_aws_ofi_nccl_network(tmp_path, sacscale_main):
    """NCCL's documented name of the aws-ofi-nccl plugin's network, as cluster environments set it:
    the set verifies (its manifest and pages made again by the project's own commands)."""
    root = tmp_path / "results" / "h200x1_shared_short"
    shutil.copytree(REPO / "results" / "h200x1_shared_short", root)
    shutil.copytree(REPO / "reports" / "h200x1_shared_short", tmp_path / "reports" / "h200x1_shared_short")
    (root / "environment.json").write_text(json.dumps(_edited(lambda e: e["env"].__setitem__(
        "NCCL_NET", "AWS Libfabric")), indent=2))
    assert sacscale_main("manifest", root).returncode == 0
    assert sacscale_main("report", "--run-set", root).returncode == 0
    done = sacscale_main("verify", root)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("value, holds", [("AWS\u00a0Libfabric", "U+00A0 NO-BREAK SPACE"),
                                          ("IB\u200b", "U+200B ZERO WIDTH SPACE"),
                                          ("IB\tSocket", "U+0009 (a control character)")])
def test_a_setting_that_is_not_printable_is_named_for_the_character_it_holds(value, holds):
    # a no-break space is no control character: the reason names what the setting holds
    found = environment_keys(_edited(lambda e: e["env"].__setitem__("NCCL_NET", value)))
    assert found == [f"env NCCL_NET: {value!r} is not a variable's setting (printable text only, but it holds "
                     f"{holds})"]
