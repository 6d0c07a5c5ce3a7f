export NCCL_DEBUG=INFO
export NCCL_ALGO="Ring
