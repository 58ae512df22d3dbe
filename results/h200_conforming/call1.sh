#!/usr/bin/env bash
# Call 1: physics cost and end-to-end rate of the conforming task on one H200.
set -u
source .carry/on-device.sh
M=.carry/g1_walk_flat.mjb; L=.carry/g1_walk_flat_lean_sensors.mjb
mkdir -p $OUT/env_bench $OUT/runs
{ nvidia-smi; lscpu; sha256sum .carry/*.mjb; git rev-parse HEAD 2>/dev/null; python3 -c 'import torch,mujoco,numpy;print(torch.__version__,mujoco.__version__,numpy.__version__)'; } > $OUT/machine.txt 2>&1
eb() { # P actions model tag
  taskset -c 0-15 sacscale env-bench --num-envs 2048 --threads $1 --cpu-ids 1-$1 --steps 60 --warmup 3 \
    --actions $2 --model $3 --no-progress --output $OUT/env_bench/$4_P$1_$2.json > $OUT/env_bench/$4_P$1_$2.log 2>&1
  echo "$(date +%T) env-bench $4 P=$1 $2 rc=$?"; tail -n 4 $OUT/env_bench/$4_P$1_$2.log
}
e2e() { # P tag
  taskset -c 0-15 timeout -s INT 200 sacscale train --devices 0 --num-envs 2048 --collector-cpu-ids 1-$1 \
    --iterations 300 --log-every 10 --trace --model $M --log-dir $OUT/runs/$2 > $OUT/runs/$2.log 2>&1
  echo "$(date +%T) e2e $2 rc=$?"; tail -n 3 $OUT/runs/$2.log
  sacscale analyze-run $OUT/runs/$2 --output $OUT/runs/$2.metrics.json > /dev/null 2>&1 && python3 -c "import json;d=json.load(open('$OUT/runs/$2.metrics.json'));print({k:v for k,v in d.items() if 'steps_per_s' in k or k=='steady_env_steps_per_s'})"
}
eb 15 zero $M conf_r1; eb 15 random $M conf_r1; eb 15 zero $L lean_r1
eb 7 zero $M conf_r1; eb 7 random $M conf_r1; eb 7 zero $L lean_r1
e2e 15 e2e_p15_halves
e2e 7 e2e_p7_halves
eb 15 zero $M conf_r2; eb 15 random $M conf_r2; eb 15 zero $L lean_r2
echo "$(date +%T) done"
