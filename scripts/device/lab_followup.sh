#!/usr/bin/env bash
# The validation lab's follow-up measurements, one device call per part (each under the 600 s a call may
# run; the lab's own budget 540 s, LAB_BUDGET_S to change it). Needs PyTorch on the machine, not the carried binaries: everything
# here is timing and tracing; scoring runs on the build machine (validation/score.py).
#   scripts/device/lab_followup.sh PART OUT_DIR
# Parts:
#   1, 2  host-, launch- and sync-bound fit jobs, and the transformers whose bf16 step the host sets:
#         every variant timed plain and under the profiler in interleaved rounds (--profiled) and traced,
#         in one process per job (tags O1, O2): the profiler's cost per job in-process, and bf16 traces of moe_top2_sync,
#         bert_base_mlm_fp32, gru_lm_fp32 and t5_small_fp32
#   3     the held-out jobs' base, timed plain and profiled (tag O3, time only): the profiler's cost on
#         the held-out part, measured, never fitted
#   4     the GEMM probe and the sparse-embedding probe in one process, and part 5's jobs in one (P1)
#   5     part 4's second process: the sparse probe again (tag B), the odd-vocabulary jobs timed (P2)
#   6     the MoE host probe (tag A); timed and traced in one process per job (Q1): channels_last on the
#         fit convnets with the most layout transposes (regnet_y_fp32, resnext50_fp32), the whole step
#         graphed on efficientnet_v2_s_fp32 (the plan's first fix there, never measured), DLRM's sparse
#         and fused variants (their traces: what the sparse path costs inside a job, and which side of the
#         fused prediction is off), moe_top2_sync's bf16 again, and
#         the new held-out embedding job (wide_deep_embeddings: base, fused, sparse)
#   7     part 6's second process: the probe again (tag B), the same variants timed (Q2)
#   8     the held-out vit_small_fp32 first (skipped by every earlier run for the budget: no trace yet), then
#         the fit part's loader pools and host-bound job, every variant timed and traced (Q3): where the
#         step goes once more workers take the loader off the critical path (predicted 14-30 % too fast on
#         resnet34_jpeg_workers2 workers4, vit_base_jpeg_workers3 workers12, numpy_aug_on_thread loader4)
#   10,11 parts 6-8 in one full call (Q1, traced) and one shorter (Q2, timed), the held-out jobs first;
#         LAB_PROC_TAG=X tags them X1, X2 (another card's runs)
#   12,13 moe_top2_sync again after its 300-step warm-up, the MoE probe at the job's sizes warmed up as
#         long, and the held-out loader pools' variants traced (R1, traced; R2, timed)
#   14    two probes. First, the profiler's cost on the old set's checkpointed job (ckpt_large, base and
#         no_checkpointing): each option timed in one process against no profiler, and each option's
#         trace kept (job_cost_traces.tar; score them with scripts/probes/option_trace_score.py). Its
#         with_stack trace is where the replay's cost per Python event fails (issue 42's compare
#         verdict). Second, the graphed model's host cost per parameter, with .grad set to None between
#         passes as training loops do, and with gradients accumulating as the committed line was measured
#   15-17 every lab job's base traced again and timed in the same process, one process per job, a
#         third of the jobs in each call (--shard 1/3 .. 3/3; tags S1-S3): the traces the scorer reads,
#         kept in the repository (validation/traces/README.md). Timed with the trace because a host-
#         or loader-bound job's un-profiled step differs between machines of one kind (numpy_aug_on_thread:
#         229 ms on one H100 host, 166 ms predicted from another's trace)
#   18-20 the held-out third whole on whichever card comes: every variant of a third of the held-out jobs,
#         traced and timed in one process per job (T1), then timed again in a second (T2), in one call, so
#         both processes run on one host. The slow loader job goes last in its call, where the rest of the
#         budget is its timeout. Copy each call's tars as traces_T1_g<part>_<k>.tar (names must not collide).
#         With GRAPHED_PROBE=1, part 20 then reruns the graphed probe (set_to_none), with each mode's traced
#         pass and its gauge
#   21-23 the fit part whole, as 18-20 do the held-out third: every variant of a third of the fit jobs traced
#         and timed in one process per job (F1), then timed again in a second (F2), in one call. The
#         launch-, host- and sync-bound jobs first, the compiled job last (its compile is the longest).
#         Copy each call's tars as traces_F1_g<part>_<k>.tar and its results as results_F{1,2}_g<part>.jsonl
#   24    the profiler's cost against the host's speed within one job: the host-bound fit jobs traced 5 times
#         each in one process (and 5 more with Python frames), each trace right after an un-profiled round (validation/probes/
#         profiler_speed_probe.py: profiler_speed.jsonl, speed_traces_<k>.tar); then the two fit jobs
#         with no base trace on this card, every variant traced and timed (F1) and timed again (F2)
#   25    the profiler's cost split by activity: the same host-bound fit jobs' base timed plain, under CPU
#         + CUDA, CPU alone and CUDA alone in interleaved rounds, two processes (P1, P2); then
#         compile_reduce_overhead, every variant traced and timed (F1)
# Results land in OUT_DIR as results_<tag>.jsonl, traces_<tag>_*.tar and the probes' *.jsonl; score with
#   validation/score.py --lab DIR --results <all results files of one card> --trace-tag S1,S2,S3 (parts 15-17's
#   bases; earlier parts name their own tags)
set -u
part=${1:?usage: scripts/device/lab_followup.sh PART(1-8, 10-25) OUT_DIR}
out=${2:?usage: scripts/device/lab_followup.sh PART(1-8, 10-25) OUT_DIR}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
# The card first: a kind may run on another card than it names, and score.py refuses results of two.
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed "s/^/lab_followup.sh: GPU /" >&2
lab() { python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-540}" --profiled "$@"; }
case "$part" in
  1) lab --mode both --proc-tag O1 \
       --jobs t5_small_fp32,foreach_false_optimizer,log_every_step,mobilenet_small_batch,tokenize_on_thread,moe_top2_sync ;;
  2) lab --mode both --proc-tag O2 \
       --jobs bert_base_mlm_fp32,gru_lm_fp32,gpt2_small_fp32,llama_small_fp32,roberta_base_fp32,numpy_aug_on_thread ;;
  3) lab --mode time --proc-tag O3 --variants base \
       --jobs "$(python3 -c 'import json; print(",".join(json.load(open("validation/split.json"))["holdout"]))')" ;;
  4) # what one call can hold after part 3: the GEMM probe, the sparse probe's first configurations (the
     # DLRM job's tables first) in one process, the misaligned-vocabulary jobs in one process (P1)
     timeout 80 python3 validation/probes/misaligned_gemm_cost.py --out "$out/gemm_A.jsonl" --tag A
     timeout 150 python3 validation/probes/sparse_embedding_cost.py --out "$out/sparse_A.jsonl" --tag A
     python3 validation/run_lab.py --out "$out" --budget-s 160 --mode both --proc-tag P1 \
       --jobs gpt2_bf16_odd_vocab,roberta_base_bf16
     python3 validation/run_lab.py --out "$out" --budget-s 100 --mode time --proc-tag P1 \
       --variants base,pad_vocab --jobs gpt2_bf16_healthy,distilbert_workers1_healthy ;;
  5) # part 4's second process: the sparse probe's first configurations, the odd-vocabulary jobs timed (P2)
     timeout 150 python3 validation/probes/sparse_embedding_cost.py --out "$out/sparse_B.jsonl" --tag B
     python3 validation/run_lab.py --out "$out" --budget-s 100 --mode time --proc-tag P2 \
       --jobs gpt2_bf16_odd_vocab,roberta_base_bf16
     python3 validation/run_lab.py --out "$out" --budget-s 90 --mode time --proc-tag P2 \
       --variants base,pad_vocab --jobs gpt2_bf16_healthy,distilbert_workers1_healthy ;;
  6|7) # two processes of the same measurements: traced in the first (Q1), timed in the second (Q2)
     tag=$([ "$part" = 6 ] && echo A || echo B); proc=$([ "$part" = 6 ] && echo Q1 || echo Q2)
     mode=$([ "$part" = 6 ] && echo both || echo time)
     timeout 80 python3 validation/probes/moe_host_cost.py --out "$out/moe_host_$tag.jsonl" --tag "$tag"
     python3 validation/run_lab.py --out "$out" --budget-s 250 --mode "$mode" --proc-tag "$proc" \
       --variants base,channels_last,graphed_step --jobs regnet_y_fp32,resnext50_fp32,efficientnet_v2_s_fp32
     python3 validation/run_lab.py --out "$out" --budget-s 120 --mode "$mode" --proc-tag "$proc" \
       --variants base,fused,sparse,bf16 --jobs dlrm_embeddingbag,moe_top2_sync
     python3 validation/run_lab.py --out "$out" --budget-s 80 --mode "$mode" --proc-tag "$proc" \
       --jobs wide_deep_embeddings ;;
  8) lab --mode both --proc-tag Q3 --jobs vit_small_fp32,resnet34_jpeg_workers2,vit_base_jpeg_workers3,numpy_aug_on_thread ;;
  10|11) # parts 6-8 for a session with device time for one full call and a shorter one: the held-out
     # jobs first (efficientnet_v2_s's graphed step, vit_small's trace, wide_deep_embeddings), then the
     # fit part's channels_last, DLRM and MoE variants, the MoE probe, and the loader pools; traced in
     # the first (Q1), timed again in the second (Q2, no probe)
     # (LAB_PROC_TAG=X makes the tags X1 and X2: another card's runs must not mix with the H200's)
     n=$([ "$part" = 10 ] && echo 1 || echo 2); proc=${LAB_PROC_TAG:-Q}$n
     mode=$([ "$part" = 10 ] && echo both || echo time)
     k=$([ "$part" = 10 ] && echo 10 || echo 7)  # tenths of each budget: the timed-only call is shorter
     run() { b=$1; shift; python3 validation/run_lab.py --out "$out" --budget-s $((b * k / 10)) --mode "$mode" --proc-tag "$proc" "$@"; }
     run 150 --variants base,graphed_step,bf16,fused,sparse \
       --jobs efficientnet_v2_s_fp32,vit_small_fp32,wide_deep_embeddings
     run 100 --variants base,channels_last --jobs regnet_y_fp32,resnext50_fp32
     run 100 --variants base,fused,sparse,bf16 --jobs dlrm_embeddingbag,moe_top2_sync
     [ "$part" = 10 ] && timeout 60 python3 validation/probes/moe_host_cost.py --out "$out/moe_host_$proc.jsonl" --tag "$proc"
     run 130 --jobs resnet34_jpeg_workers2,numpy_aug_on_thread,vit_base_jpeg_workers3 ;;
  12|13) # the MoE job warmed up past its bf16 GEMMs' shape transient (300 steps) and the MoE probe at the
     # job's sizes with as long a warm-up (does the changing shapes' cost fade?); then the held-out loader
     # pools' variants traced (why 4x the workers bought 1.5x on the H200's host); traced in the first (R1),
     # timed in the second (R2, the probe again); LAB_PROC_TAG=X makes the tags X1 and X2
     n=$([ "$part" = 12 ] && echo 1 || echo 2); proc=${LAB_PROC_TAG:-R}$n
     mode=$([ "$part" = 12 ] && echo both || echo time)
     python3 validation/run_lab.py --out "$out" --budget-s 130 --mode "$mode" --proc-tag "$proc" --jobs moe_top2_sync
     timeout 120 python3 validation/probes/moe_host_cost.py --out "$out/moe_host_${proc}_warm.jsonl" --tag "$proc" \
       --tokens 16384 --d 1024 --ff 4096 --warmup 300 --rounds 4 --steps 10
     python3 validation/run_lab.py --out "$out" --budget-s 200 --mode "$mode" --proc-tag "$proc" \
       --jobs efficientnet_jpeg_workers2,resnet50_jpeg_workers4 ;;
  14) timeout 250 python3 scripts/probes/profiler_job_cost.py --out "$out" --rounds 5 --steps 8 --timeout 115 \
        --only ckpt_large/base,ckpt_large/no_checkpointing --keep-traces "$out/job_cost_traces"
      tar cf "$out/job_cost_traces.tar" -C "$out" job_cost_traces && rm -rf "$out/job_cost_traces"
      timeout 150 python3 scripts/probes/graphed_callables_cost.py --grads set_to_none --rounds 5 \
        > "$out/graphed_callables_set_to_none.jsonl"
      timeout 120 python3 scripts/probes/graphed_callables_cost.py --grads accumulate --rounds 5 \
        > "$out/graphed_callables_accumulate.jsonl" ;;
  15|16|17) n=$((part - 14)); python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-540}" --mode both \
        --variants base --proc-tag "${LAB_PROC_TAG:-S}$n" --shard "$n/3" ;;
  18|19|20)
     case "$part" in
       18) jobs=bert_eager_attention,convnext_tiny_fp32,densenet121_fp32,distilbert_workers1_healthy,gpt2_bf16_healthy,tiny_gpt_batch2 ;;
       19) jobs=efficientnet_v2_s_fp32,lightning_fabric_fp32,mobilenet_v3_large_fp32,swin_tiny_bf16_healthy,vit_small_fp32,resnet50_jpeg_workers4 ;;
       20) jobs=unet_diffusion_fp32,lstm_lm_fp32,vit_eager_attention_bf16,wide_deep_embeddings,efficientnet_jpeg_workers2 ;;
     esac
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-320}" --mode both --proc-tag T1 --jobs "$jobs"
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET2_S:-220}" --mode time --proc-tag T2 --jobs "$jobs"
     # with GRAPHED_PROBE=1 the last call also reruns the graphed probe with the host-speed gauge of each
     # mode's traced pass (off by default: the old set's graphed pairs put the error in the base's estimate)
     [ "$part" = 20 ] && [ "${GRAPHED_PROBE:-0}" = 1 ] && timeout 150 python3 scripts/probes/graphed_callables_cost.py --grads set_to_none --rounds 5 \
        > "$out/graphed_callables_set_to_none_gauged.jsonl" ;;
  21|22|23)
     case "$part" in
       21) jobs=foreach_false_optimizer,mobilenet_small_batch,log_every_step,tokenize_on_thread,pageable_copies_mlp,mlp_bf16_healthy,gru_lm_fp32,numpy_aug_on_thread,resnet18_jpeg_workers0 ;;
       22) jobs=bert_base_mlm_fp32,gpt2_small_fp32,gpt2_eager_attention_fp32,llama_small_fp32,roberta_base_fp32,roberta_base_bf16,gpt2_bf16_odd_vocab,opt_eager_attention_bf16,t5_small_fp32,dlrm_embeddingbag ;;
       23) jobs=efficientnet_b0_fp32,regnet_y_fp32,resnext50_fp32,resnet50_timm_healthy,moe_top2_sync,resnet34_jpeg_workers2,vit_base_jpeg_workers3,compile_reduce_overhead ;;
     esac
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-320}" --mode both --proc-tag F1 --jobs "$jobs"
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET2_S:-220}" --mode time --proc-tag F2 --jobs "$jobs" ;;
  24) host_jobs=log_every_step,mobilenet_small_batch,foreach_false_optimizer,tokenize_on_thread
     python3 validation/probes/profiler_speed_probe.py --out "$out" --jobs "$host_jobs" --rounds 5 --steps 30 --with-stack
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-180}" --mode both --proc-tag F1 \
        --jobs t5_small_fp32,dlrm_embeddingbag
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET2_S:-100}" --mode time --proc-tag F2 \
        --jobs t5_small_fp32,dlrm_embeddingbag ;;
  25) host_jobs=log_every_step,mobilenet_small_batch,foreach_false_optimizer,tokenize_on_thread
     for tag in P1 P2; do
       python3 validation/run_lab.py --out "$out" --budget-s "${LAB_SPLIT_S:-150}" --mode time --proc-tag "$tag" \
          --variants base --rounds 4 --profiled cpu+cuda,cpu,cuda --jobs "$host_jobs"
     done
     python3 validation/run_lab.py --out "$out" --budget-s "${LAB_BUDGET_S:-240}" --mode both --proc-tag F1 \
        --jobs compile_reduce_overhead ;;
  *) echo "lab_followup.sh: no part $part (1-8, 10-25)" >&2; exit 2 ;;
esac
