// `topo` and `place` as a user runs them: the nvidia-smi matrix, NCCL's XML, JSON that feeds back,
// the fake-NVML machine, one-line errors naming the file, node and cluster placements.
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

using namespace gpudoctor::testing;  // NOLINT: the shared CLI test helpers

TEST(CliTopo, RendersAFileAsNvidiaSmiDoes) {
  auto r = run("topo --topology " + src("testdata/topology/dgx1_v100.toml"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("CPU Affinity"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NUMA Affinity"), std::string::npos);
  EXPECT_NE(r.out.find("NV2"), std::string::npos);
  EXPECT_NE(r.out.find("NIC3: mlx5_3"), std::string::npos);
  fs::path xml = fs::temp_directory_path() / "gpudoctor_cli_topo.xml";
  auto x = run("topo --topology " + src("testdata/topology/dgx_h100.toml") + " --nccl-xml " + xml.string());
  ASSERT_EQ(x.rc, 0) << x.err;
  std::ifstream f(xml);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text.rfind("<system version=\"1\">", 0), 0u) << text;
  EXPECT_NE(text.find("tclass=\"0x068000\""), std::string::npos);
  fs::remove(xml);
  // A file without bus ids gives no XML (NCCL matches GPUs by bus id), one line naming the file.
  auto nobus = run("topo --topology " + src("testdata/topology/dgx_a100.toml") + " --nccl-xml " + xml.string());
  EXPECT_EQ(nobus.rc, 3);
  EXPECT_EQ(lines(nobus.err), 1) << nobus.err;
  EXPECT_NE(nobus.err.find("dgx_a100.toml: GPU 0 has no PCI bus id"), std::string::npos) << nobus.err;
  EXPECT_FALSE(fs::exists(xml));
  auto j = run("topo --json - --topology " + src("testdata/topology/workstation_4gpu_nvlink_pairs.toml"));
  ASSERT_EQ(j.rc, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["nvidia_smi_matrix"][0][1], "NV4");
}

// topo --json fed back to topo gives the same matrix for every committed node file (was: NIC-NIC
// PXB read back as NODE, the NIC levels lost in the JSON).
TEST(CliTopo, JsonRoundTripKeepsTheMatrix) {
  for (const char* f : {"dgx_h100", "dgx_a100", "dgx1_v100", "pcie_8gpu_2socket", "workstation_4gpu_nvlink_pairs"}) {
    SCOPED_TRACE(f);
    auto a = run("topo --topology " + src(std::string("testdata/topology/") + f + ".toml"));
    ASSERT_EQ(a.rc, 0) << a.err;
    auto j = run("topo --json - --topology " + src(std::string("testdata/topology/") + f + ".toml"));
    ASSERT_EQ(j.rc, 0) << j.err;
    fs::path back = fs::temp_directory_path() / (std::string("gpudoctor_roundtrip_") + f + ".json");
    std::ofstream(back) << j.out;
    auto b = run("topo --topology " + back.string());
    fs::remove(back);
    ASSERT_EQ(b.rc, 0) << b.err;
    // All but the first line, which names the file.
    EXPECT_EQ(a.out.substr(a.out.find('\n')), b.out.substr(b.out.find('\n')));
  }
}

TEST(CliTopo, NoDriverIsOneLine) {
  auto r = run("topo --nvml-library /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.rc, 4);  // not on this machine (exit_codes.h)
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("gpudoctor: error: cannot load NVML"), std::string::npos) << r.err;
}

TEST(CliTopo, FakeNvmlMachine) {
  std::string env = "GPUDOCTOR_FAKE_NVML=" + src("testdata/fake_nvml/h200_2gpu.txt") + " ";
  std::string cmd = env + GPUDOCTOR_BIN + " topo --nvml-library " + GPUDOCTOR_FAKE_NVML + " --sysfs-root " +
                    src("testdata/sysroot/topo_2gpu") + " > /tmp/gpudoctor_cli_fake.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream f("/tmp/gpudoctor_cli_fake.txt");
  std::string out((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(out.find("NV18"), std::string::npos) << out;
  EXPECT_NE(out.find("16-31"), std::string::npos) << out;
}

// Issue 20: a GPU that compute processes run on is never offered unless --include-busy (it was picked
// as free at 97 % with two processes).
TEST(CliTopo, PlaceLeavesBusyGpusOut) {
  std::string env = "GPUDOCTOR_FAKE_NVML=" + src("testdata/fake_nvml/h200_2gpu_busy.txt");
  std::string probe =
      std::string(" --nvml-library ") + GPUDOCTOR_FAKE_NVML + " --sysfs-root " + src("testdata/sysroot/topo_2gpu");
  auto one = run("place --gpus 1 --json -" + probe, env);
  ASSERT_EQ(one.rc, 0) << one.err;
  auto j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["gpus"], nlohmann::json::array({1})) << one.out;
  EXPECT_EQ(j["free"], nlohmann::json::array({1})) << one.out;
  EXPECT_NE(one.err.find("GPU 0 runs 2 processes (4242, 4243): not offered"), std::string::npos) << one.err;
  auto two = run("place --gpus 2" + probe, env);
  EXPECT_EQ(two.rc, 1) << two.out;
  auto busy = run("place --gpus 2 --include-busy --json -" + probe, env);
  ASSERT_EQ(busy.rc, 0) << busy.err;
  EXPECT_EQ(nlohmann::json::parse(busy.out)["gpus"], nlohmann::json::array({0, 1})) << busy.out;
}

TEST(CliTopo, BadFilesNameFileLineAndKey) {
  struct Case {
    const char* file;
    const char* what;
  } cases[] = {{"testdata/topology/bad/unknown_gpu.toml", ":9: [[nvlink]] \"gpus\": unknown GPU id 2"},
               {"testdata/topology/bad/asymmetric_links.toml", ":12: asymmetric NVLinks"},
               {"testdata/topology/bad/switch_cycle.toml", "cycle in the switch tree"}};
  for (const auto& c : cases) {
    auto r = run("place --gpus 1 --topology " + src(c.file));
    EXPECT_EQ(r.rc, 3) << c.file;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(src(c.file)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.what), std::string::npos) << r.err;
  }
}

TEST(CliPlace, NodeWithBindings) {
  auto r = run("place --gpus 3 --free 0,1,2,4,5 --topology " + src("testdata/topology/dgx1_v100.toml"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("export CUDA_VISIBLE_DEVICES=0,1,2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numactl --cpunodebind=0 --membind=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NCCL_IB_HCA=mlx5_0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("go-gpuallocator"), std::string::npos) << r.out;
  auto j = run("place --json - --gpus 8 --topology " + src("testdata/topology/dgx1_v100.toml"));
  ASSERT_EQ(j.rc, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["score"]["ring_gbps"], 50.0);
  auto big = run("place --gpus 9 --topology " + src("testdata/topology/dgx1_v100.toml"));
  EXPECT_EQ(big.rc, 1);
  EXPECT_NE(big.err.find("asked for 9 GPUs but only 8"), std::string::npos) << big.err;
  auto usage = run("place --gpus 2 --free 0,x --topology " + src("testdata/topology/dgx1_v100.toml"));
  EXPECT_EQ(usage.rc, 2);
}

// torchrun gives every local rank one environment (issue 20): the per-rank NIC and NUMA binding
// goes through a wrapper keyed on $LOCAL_RANK, with CUDA_VISIBLE_DEVICES the same for all ranks;
// the wrapper is valid sh and picks, for each local rank, the i-th GPU's settings.
TEST(CliPlace, TorchrunWrapperKeyedOnLocalRank) {
  auto j = run("place --json - --gpus 4 --topology " + src("testdata/topology/dgx1_v100.toml"));
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  const std::string w = doc["torchrun_wrapper"];
  EXPECT_NE(w.find("case \"$LOCAL_RANK\" in"), std::string::npos) << w;
  EXPECT_NE(w.find("CUDA_VISIBLE_DEVICES=" + doc["cuda_visible_devices"].get<std::string>()), std::string::npos) << w;
  EXPECT_EQ(std::count(w.begin(), w.end(), ')'), 4) << w;  // one case per local rank
  // Local rank 2 gets GPU gpus[2]'s NIC, as the per-rank table binds it.
  int gpu2 = doc["gpus"][2];
  std::string nic2;
  for (const auto& r : doc["ranks"])
    if (r["gpu"] == gpu2 && r.contains("nic")) nic2 = r["nic"];
  EXPECT_NE(w.find("2) export NCCL_IB_HCA=" + nic2 + ";"), std::string::npos) << w;
  auto d = std::filesystem::temp_directory_path() / ("gd_wrapper_" + std::to_string(::getpid()) + ".sh");
  { std::ofstream(d) << w; }
  EXPECT_EQ(std::system(("sh -n " + d.string()).c_str()), 0) << w;
  // Run it as torchrun would, for local rank 1, with a command that prints its NIC.
  std::string cmd = "LOCAL_RANK=1 sh " + d.string() + " sh -c 'echo $NCCL_IB_HCA' 2>&1";
  std::string got;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) got += buf;
    ::pclose(p);
  }
  std::filesystem::remove(d);
  if (std::system("command -v numactl >/dev/null 2>&1") == 0) {
    EXPECT_EQ(got, nic2 + "\n");
  }
  auto t = run("place --gpus 4 --topology " + src("testdata/topology/dgx1_v100.toml"));
  EXPECT_NE(t.out.find("torchrun --nproc-per-node 4 --no-python ./bind.sh python train.py"), std::string::npos)
      << t.out;
}

TEST(CliPlace, ClusterWithSchedulerHints) {
  auto r = run("place --nodes 2 --gpus-per-node 8 --topology " + src("testdata/topology/cluster_small.toml"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("--nodelist=n05,n06"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("topologyKey: network.gpudoctor.io/leaf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpu-bind=closest"), std::string::npos);
  EXPECT_NE(r.out.find("Links=-1,18,18"), std::string::npos) << r.out;
  // Every node of the file is labelled and in topology.conf, with the spines and the core (issue 20:
  // only the chosen hosts were, leaving Slurm disconnected leaves).
  EXPECT_NE(r.out.find("kubectl label node n01 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kubectl label node n08 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SwitchName=core Switches=spine0,spine1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SwitchName=leaf0 Nodes=n01,n02"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--ntasks-per-node=8"), std::string::npos) << r.out;
  auto j = run("place --json - --nodes 2 --gpus-per-node 8 --topology " + src("testdata/topology/cluster_small.toml"));
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_NE(doc["slurm"].get<std::string>().find("--ntasks-per-node=8"), std::string::npos);
  EXPECT_NE(doc["slurm_topology_conf"].get<std::string>().find("SwitchName=spine1 Switches=leaf2,leaf3\n"),
            std::string::npos);
  EXPECT_NE(doc["kubernetes_pod_template"].get<std::string>().find("topologyKey: network.gpudoctor.io/leaf"),
            std::string::npos);
  // The pod template's resources belong to its container, not beside the pod's affinity (where
  // Kubernetes rejects the field).
  const std::string pod = doc["kubernetes_pod_template"];
  EXPECT_EQ(pod.rfind("spec:\n  affinity:\n    nodeAffinity:\n", 0), 0u) << pod;
  EXPECT_NE(pod.find("\n  containers:\n  - name: <name>\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n"),
            std::string::npos)
      << pod;
  EXPECT_EQ(pod.find("\nresources:"), std::string::npos) << pod;
  EXPECT_NE(pod.find("values:\n            - n0"), std::string::npos) << pod;
  const std::string labels = doc["kubernetes_labels"];
  EXPECT_EQ(std::count(labels.begin(), labels.end(), '\n'), 8);
  EXPECT_NE(doc["slurm_gres_conf"].get<std::string>().find("Links=-1,18"), std::string::npos);
  auto spread = run("place --nodes 4 --gpus-per-node 4 --topology " + src("testdata/topology/cluster_small.toml"));
  ASSERT_EQ(spread.rc, 0) << spread.err;
  EXPECT_NE(spread.out.find("5 switch hops"), std::string::npos) << spread.out;
  auto none = run("place --nodes 6 --gpus-per-node 8 --topology " + src("testdata/topology/cluster_small.toml"));
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("only 5 of the 8 hosts"), std::string::npos) << none.err;
}

}  // namespace
