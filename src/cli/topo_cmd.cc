// `gpudoctor topo`: this node's GPU topology (or a topology file's) as nvidia-smi topo -m shows it,
// as JSON, as an NCCL topology file; `--measure` adds measured copy bandwidths (CUDA builds).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "probes/topology_probe.h"
#include "report/topo_report.h"
#include "sources/topology_file/topology_file.h"
#ifdef GPUDOCTOR_HAVE_CUDA
#include "gpu/nccl_bench.h"
#include "gpu/p2p_bench.h"
#endif

namespace gpudoctor::cli {

namespace {

struct TopoArgs {
  std::string topology, nccl_xml, sysfs_root, nvml_library, measure_bytes = "256M";
  bool measure = false;
  std::string json;
  int repeats = 20;
};

int runTopo(const TopoArgs& a) {
  for (auto [set, flag] : {std::pair{a.measure_bytes != "256M", "--measure-bytes"}, {a.repeats != 20, "--repeats"}})
    if (set && !a.measure) return fail(std::string(flag) + " sets up --measure: give --measure too", kUsage);
  NodeTopology t;
  if (!a.topology.empty()) {
    if (a.measure) return fail("--measure measures this machine; it cannot be combined with --topology", kUsage);
    auto f = loadTopologyFile(a.topology);
    if (!f.ok()) return fail(f.error().message, kBadInput);
    if (f.value().is_cluster && !f.value().cluster.has_node)
      return fail(a.topology + ": a cluster file without node_topology has no GPUs to show", kBadInput);
    t = f.value().is_cluster ? f.value().cluster.node : f.value().node;
  } else {
    auto p = probeTopology({a.nvml_library, a.sysfs_root});
    if (!p.ok()) return fail(p.error().message + "; or show a file with --topology FILE", kNoDevice);
    t = std::move(p.value());
  }
  BandwidthMeasurement m;
  bool measured = false;
  if (a.measure) {
#ifdef GPUDOCTOR_HAVE_CUDA
    auto bytes = parseByteSize(a.measure_bytes);
    if (!bytes.ok() || bytes.value() < 1024)
      return fail("--measure-bytes: " + (bytes.ok() ? "at least 1K" : bytes.error().message), kUsage);
    auto r = measureCopyBandwidth(static_cast<int64_t>(bytes.value()), a.repeats);
    if (!r.ok()) return fail("--measure: " + r.error().message, kNoDevice);  // no device, or one that fails
    m = std::move(r.value());
    measured = true;
#else
    return fail("--measure needs a build with CUDA (this gpudoctor was built without it)", kNoDevice);
#endif
  }
  if (a.nccl_xml == "-" && jsonOnly(a.json))
    return fail("--nccl-xml - and --json - would both write to stdout: give one a file", kUsage);
  if (!a.nccl_xml.empty()) {
    if (std::string why = ncclXmlMissing(t); !why.empty())
      return fail("--nccl-xml: " + (a.topology.empty() ? std::string("this machine") : a.topology) + ": " + why,
                  kBadInput);
    std::string xml = renderNcclXml(ncclXmlSystem(t));
    if (a.nccl_xml == "-") {
      std::fwrite(xml.data(), 1, xml.size(), stdout);
      return 0;
    }
    if (Status s = writeFileAtomic(a.nccl_xml, xml); !s.ok()) return fail(s.message(), kBadInput);
    std::fprintf(stderr, "gpudoctor: wrote %s (use it with NCCL_TOPO_FILE=%s)\n", a.nccl_xml.c_str(),
                 a.nccl_xml.c_str());
  }
  std::string json = a.json.empty() ? "" : renderTopoJson(t, measured ? &m : nullptr);
  std::string text = jsonOnly(a.json) ? "" : renderTopoText(t, gpuCpuLists(t), measured ? &m : nullptr);
  if (std::string err = writeOutputs(a.json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

}  // namespace

std::function<int()> addTopo(CLI::App& app) {
  auto a = std::make_shared<TopoArgs>();
  auto* cmd = app.add_subcommand(
      "topo",
      "This node's GPU topology: GPUs, NVLinks (NV# per pair, NVSwitch), PCIe path levels (NVML's common ancestor), "
      "NUMA node and CPU affinity of each GPU, RDMA NICs (InfiniBand/RoCE HCAs) with their PCIe distance to each GPU, "
      "as the "
      "matrix `nvidia-smi topo -m` prints (X, NV#, PIX, PXB, PHB, NODE, SYS). NVML is loaded at run time "
      "(GPUDOCTOR_NVML_LIBRARY to choose); without a driver use --topology FILE.");
  cmd->add_option("--topology", a->topology, "Show a topology file (TOML or JSON) instead of this machine")
      ->type_name("FILE");
  addJsonOption(cmd, &a->json, "the topology, in the topology-file schema (feed it back with place --topology),");
  cmd->add_option("--nccl-xml", a->nccl_xml, "Also write NCCL's topology XML for NCCL_TOPO_FILE (- for stdout only)")
      ->type_name("FILE");
  cmd->add_flag("--measure", a->measure, "Measure GPU<->GPU copy bandwidth both ways and host<->GPU (CUDA builds)");
  cmd->add_option("--measure-bytes", a->measure_bytes, "Bytes per timed copy")->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Timed copies per figure (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--sysfs-root", a->sysfs_root, "Root of /sys and /proc (tests)")->type_name("DIR")->group("");
  cmd->add_option("--nvml-library", a->nvml_library, "libnvidia-ml.so.1 to load")->type_name("PATH");
  return [a] { return runTopo(*a); };
}

}  // namespace gpudoctor::cli
