# Two of our trainers on one GPU, both starting with a cold compile cache: A with one lock
# folder (the first-update lock in effect), B with a folder each (as before the lock).
T0=$(date +%s)
source .carry-ours/on-device.sh >/dev/null || exit 1
pair() {  # $1 name, $2 seconds; $3 lock dir of trainer 1, $4 of trainer 2
  export TORCHINDUCTOR_CACHE_DIR=/tmp/ind_$1 TRITON_CACHE_DIR=/tmp/triton_$1; rm -rf /tmp/ind_$1 /tmp/triton_$1
  local pools=("1-7" "8-15") locks=("$3" "$4") i
  for i in 0 1; do
    SACSCALE_LOCK_DIR=${locks[$i]} timeout -s INT $2 sacscale train --devices 0 --collector-cpu-ids ${pools[$i]} \
      --num-envs 1024 --batch-size 4096 --iterations 20 --log-every 5 --seed $((i+1)) \
      --model .carry-ours/g1_walk_flat.mjb --log-dir /tmp/conc_$1_$i > $OUT/$1_$i.log 2>&1 &
  done
  local t=$(date +%s); wait %1; local e1=$?; wait %2; local e2=$?
  echo "$1: exits $e1 $e2 after $(( $(date +%s) - t )) s"
  for i in 0 1; do grep -E -i "waiting for|assert|Error|iteration 20|first update" $OUT/$1_$i.log | head -5 | cut -c1-250; done
}
mkdir -p /tmp/lockA /tmp/lockB0 /tmp/lockB1
pair A 150 /tmp/lockA /tmp/lockA
left=$(( 185 - ($(date +%s) - T0) )); echo "left $left s"
[ $left -gt 40 ] && pair B $left /tmp/lockB0 /tmp/lockB1
echo "total $(( $(date +%s) - T0 )) s"
