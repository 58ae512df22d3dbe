#!/usr/bin/env bash
# One 15M-env-step learning run (7325 iterations x 2048 envs) on one GPU with a 15-CPU pool,
# then the deterministic evaluation of its final checkpoint. Env: NAME, SEED, FLAGS, T.
set -u
cd .gpusnap && ln -sfn ../.carry .carry && source .carry/on-device.sh || exit 1
mkdir -p $OUT/r
if [ -n "${GPUTEST:-}" ]; then  # the learner's CUDA checks first (fails fast before a long run)
  timeout 240 python3 -m pytest -q -m gpu tests/learn -p no:cacheprovider > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests rc=$?"; tail -5 $OUT/r/gpu_tests.log
fi
{ nvidia-smi -L; lscpu | head -20; sha256sum .carry/*.mjb; git -C .. log -1 --format=%H 2>/dev/null; } > $OUT/r/machine.txt 2>&1
start=$(date +%s)
taskset -c 0-15 timeout -s INT ${T:-470} sacscale train --devices 0 --num-envs 2048 --collector-cpu-ids 1-15 \
  --iterations 7325 --log-every 20 --trace --seed $SEED $FLAGS --model .carry/g1_walk_flat.mjb \
  --log-dir $OUT/r/$NAME > $OUT/r/$NAME.log 2>&1
echo "train rc=$? in $(( $(date +%s) - start )) s"; tail -c 400 $OUT/r/$NAME.log
start=$(date +%s)
sacscale evaluate $OUT/r/$NAME --output $OUT/r/$NAME.eval.json --figure $OUT/r/$NAME.eval.png \
  --model .carry/g1_walk_flat.mjb --threads 15 > $OUT/r/$NAME.eval.log 2>&1
echo "eval rc=$? in $(( $(date +%s) - start )) s"; tail -c 1500 $OUT/r/$NAME.eval.log
cd $OUT/r && tar czf $OUT/$NAME.tgz . && cd $OUT && rm -rf $OUT/r && ls -la $OUT
