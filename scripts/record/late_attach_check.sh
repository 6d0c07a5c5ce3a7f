#!/usr/bin/env bash
# A late attach (--delay/--duration) must still record the API calls; the small JAX job; plain vs
# record on the launch-bound job, 3 rounds. Run from the repository root with the carry in .carry-rec.
set -u
gd=.carry-rec/gpudoctor; w=$OUT/late; mkdir -p $w; export PYTHONUNBUFFERED=1
$gd record -o $w/window --delay 9 --duration 2 -- python3 scripts/record/torch_job.py --steps 1500 --warmup 5 | cut -c1-220
$gd analyze $w/window 2>&1 | head -4
XLA_FLAGS=--xla_gpu_autotune_level=0 $gd record -o $w/jax_small -- python3 scripts/record/jax_job.py --steps 10 --warmup 2 2>&1 | tail -2
for r in 1 2 3; do
  python3 scripts/record/torch_job.py --steps 60 --warmup 15 | tail -1 | python3 -c "import json,sys; print('plain', json.load(sys.stdin)['median_step_ns'])"
  $gd record -q -o $w/o$r -- python3 scripts/record/torch_job.py --steps 60 --warmup 15 | tail -1 | python3 -c "import json,sys; print('record', json.load(sys.stdin)['median_step_ns'])"
  rm -rf $w/o$r
done
tar czf $OUT/late.tgz -C $OUT late && rm -rf $w
