#!/usr/bin/env bash
# Snakemake runs this once in each new conda environment made from envs/sacscale.yaml
# (`snakemake --sdm conda`), with the environment activated and the workflow's working
# directory (the repository root) as the current directory. It installs the project
# itself, editable: the rules' `sacscale` is then this checkout's code, and the
# environment record finds the checkout's commit. (The YAML cannot do it: Snakemake
# creates the environment from a copy of the file under .snakemake/conda/, so a pip
# path relative to envs/ would point elsewhere.)
set -euo pipefail
if ! grep -q '^name = "sacscale"$' pyproject.toml 2>/dev/null; then
    echo "sacscale.post-deploy.sh: $PWD is not the sacscale repository root (no pyproject.toml naming sacscale)" >&2
    exit 1
fi
python -m pip install --quiet --no-deps -e .
sacscale --help >/dev/null
