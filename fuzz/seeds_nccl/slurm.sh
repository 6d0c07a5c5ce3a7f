srun --export=ALL,NCCL_IB_HCA=mlx5_0,NCCL_NET_GDR_LEVEL=PIX python train.py
