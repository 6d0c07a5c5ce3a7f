// Renderers for `gpudoctor topo` and `gpudoctor place`: the nvidia-smi topo -m matrix, JSON (in the
// topology-file schema, so `topo --json` output can be fed back to `place --topology`), NCCL's
// topology XML (NCCL_TOPO_FILE), placements with their bindings and scheduler hints. No computing: the
// CPU lists, the XML's defaults and the bindings are resolved in analysis/ (topo_view, placement).
#pragma once
#include <string>
#include <vector>

#include "analysis/placement.h"
#include "analysis/topo_view.h"
#include "model/topology.h"

namespace gpudoctor {

// The matrix users know from `nvidia-smi topo -m` (X, NV#, PIX, PXB, PHB, NODE, SYS), NIC rows and
// columns, CPU (gpu_cpus: gpuCpuLists) and NUMA affinity columns, legends; then the measured
// bandwidths when given.
std::string renderTopoText(const NodeTopology& t, const std::vector<std::string>& gpu_cpus,
                           const BandwidthMeasurement* m = nullptr);
// JSON in the topology-file schema plus the matrix as text cells and the measurement when given.
std::string renderTopoJson(const NodeTopology& t, const BandwidthMeasurement* m = nullptr);
// NCCL's topology XML: <system version="1"><cpu ...><pci ...><gpu ...><nvlink .../></gpu></pci>...
// from the content ncclXmlSystem resolved.
std::string renderNcclXml(const NcclXmlSystem& sys);
// The cell of the matrix for GPUs a and b: "X", "NV18", "PIX", ... .
std::string topoCell(const NodeTopology& t, int a, int b);

// Placement on one node: CUDA_VISIBLE_DEVICES, per-rank numactl / taskset and NCCL_IB_HCA lines,
// the comparison with go-gpuallocator's choice, and a paragraph saying why.
std::string renderNodePlacementText(const NodeTopology& t, const NodePlacementReport& r);
// The same as JSON.
std::string renderNodePlacementJson(const NodeTopology& t, const NodePlacementReport& r);
// Placement on a cluster: the hosts, hops, Kubernetes hints (labels, affinity) and Slurm lines.
std::string renderClusterPlacementText(const ClusterTopology& c, const ClusterPlacement& p, int gpus_per_node,
                                       const NodePlacement* per_node);
// The same as JSON.
std::string renderClusterPlacementJson(const ClusterTopology& c, const ClusterPlacement& p, int gpus_per_node,
                                       const NodePlacement* per_node);

}  // namespace gpudoctor
