#!/usr/bin/env bash
# Call 2: a ~9-minute learning run of the conforming task (reference defaults), seed 1.
set -u
source .carry/on-device.sh
mkdir -p $OUT/runs
{ nvidia-smi -L; lscpu | head -20; sha256sum .carry/*.mjb; } > $OUT/machine.txt 2>&1
taskset -c 0-15 timeout -s INT ${T:-525} sacscale train --devices 0 --num-envs 2048 --collector-cpu-ids 1-15 \
  --iterations 12000 --log-every 20 --trace --seed 1 --tilt-obs ${TILT:-world} --model .carry/g1_walk_flat.mjb \
  --log-dir $OUT/runs/learn_${TILT:-world}_s1 > $OUT/runs/learn_${TILT:-world}_s1.log 2>&1
echo "rc=$?"; tail -c 600 $OUT/runs/learn_${TILT:-world}_s1.log
