# A block of NCCL settings as copied between teams: real, unknown, deprecated, removed,
# out-of-range, host-mismatched and performance-hostile settings together.
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,FOO
export NCCL_SOCKET_IFNAME=eth1
export NCCL_IB_HCA=mlx5_0,mlx5_1:1
export NCCL_ALGO=Ring
export NCCL_PROTO=^LL128
export NCCL_MIN_NCHANNELS=4
export NCCL_MIN_CTAS=16
export NCCL_MAX_CTAS=2
export NCCL_NTHREADS=100
export NCCL_BUFFSIZE=8M
export NCCL_AVOID_NODE0=1
export NCCL_SOCKET_IFNAM=eth0
export NCCL_IB_DISABLE=1
export NCCL_NVLS_ENABLE=0   # gpudoctor: keep (multicast is forbidden on this cluster)
export NCCL_P2P_LEVEL=NVLINK
export NCCL_TOPO_FILE=/nonexistent/topo.xml
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_CROSS_NIC=0
