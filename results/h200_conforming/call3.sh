#!/usr/bin/env bash
# Call 3: a short learning run of the reference's default task that keeps its checkpoint.
set -u
source .carry/on-device.sh
mkdir -p $OUT/r
taskset -c 0-15 timeout -s INT ${T:-225} sacscale train --devices 0 --num-envs 2048 --collector-cpu-ids 1-15 \
  --iterations 12000 --log-every 20 --trace --seed 2 --model .carry/g1_walk_flat.mjb \
  --log-dir $OUT/r/learn_world_s2 > $OUT/r/learn_world_s2.log 2>&1
echo "rc=$?"; tail -c 300 $OUT/r/learn_world_s2.log; ls -la $OUT/r/learn_world_s2/checkpoints
cd $OUT/r && tar czf $OUT/learn_world_s2.tgz learn_world_s2 learn_world_s2.log && cd $OUT && rm -rf $OUT/r && ls -la $OUT
