// Reading NCCL settings in the forms users carry them: export blocks, Kubernetes env lists,
// Slurm --export lists and NCCL's own "set by environment" log lines; malformed lines name the line.
#include "sources/nccl_env/settings_reader.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace settings_reader_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

TEST(NcclSettings, ShellForms) {
  auto r = readNcclSettings(
      "# comment NCCL_IGNORED=1\n"
      "export NCCL_DEBUG=INFO\n"
      "NCCL_ALGO='Ring' NCCL_PROTO=\"Simple\" python train.py --x NCCL_NOT=1\n"
      "declare -x NCCL_SOCKET_IFNAME=\"=eth0\"\n"
      "setenv NCCL_IB_HCA mlx5_0\n"
      "export NCCL_NVLS_ENABLE=0  # gpudoctor: keep\n"
      "export NCCL_DEBUG=WARN\n"
      "export OTHER=1\n",
      "x.sh");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& s = r.value();
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].name, "NCCL_DEBUG");
  EXPECT_EQ(s[0].value, "WARN");  // the later export wins, as in a shell
  EXPECT_EQ(s[0].origin, "x.sh:7");
  EXPECT_EQ(s[1].name, "NCCL_ALGO");
  EXPECT_EQ(s[1].value, "Ring");
  EXPECT_EQ(s[2].name, "NCCL_PROTO");
  EXPECT_EQ(s[2].value, "Simple");
  EXPECT_EQ(s[3].value, "=eth0");
  EXPECT_EQ(s[4].name, "NCCL_IB_HCA");
  EXPECT_EQ(s[4].value, "mlx5_0");
  EXPECT_TRUE(s[5].keep);
  EXPECT_FALSE(s[0].keep);
}

TEST(NcclSettings, KubernetesSlurmAndFiles) {
  auto k = readNcclSettingsFile(src("testdata/nccl_env/pod.yaml"));
  ASSERT_TRUE(k.ok()) << k.error().message;
  ASSERT_EQ(k.value().size(), 3u);
  EXPECT_EQ(k.value()[1].name, "NCCL_IB_HCA");
  EXPECT_EQ(k.value()[1].value, "=mlx5_0:1");
  EXPECT_EQ(k.value()[2].value, "WARN");
  auto s = readNcclSettingsFile(src("testdata/nccl_env/slurm.sh"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s.value().size(), 2u);
  EXPECT_EQ(s.value()[1].name, "NCCL_NET_GDR_LEVEL");
  EXPECT_EQ(s.value()[1].value, "PIX");
}

TEST(NcclSettings, RealNcclLogLines) {
  // A real NCCL_DEBUG=INFO log from 2 x H200 (the fixture's format, committed here).
  auto r = readNcclSettings(
      "vm:681:681 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
      "vm:681:681 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n",
      "rank0.log");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().size(), 1u);
  EXPECT_EQ(r.value()[0].name, "NCCL_NVLS_ENABLE");
  EXPECT_EQ(r.value()[0].value, "0");
  EXPECT_EQ(r.value()[0].origin, "rank0.log:1");
}

TEST(NcclSettings, LinesThatAreNotSettings) {
  auto r = readNcclSettings(
      "export NCCL_DEBUG=INFO\nexport NCCL_ALGO=Ring\nunset NCCL_DEBUG\nexport NCCL_IB_HCA\n"
      "[ -n \"$NCCL_IB_HCA\" ] && echo ${NCCL_IB_HCA}\n"
      "- name: NCCL_SOCKET_IFNAME\n  valueFrom:\n    configMapKeyRef: {name: x, key: y}\n",
      "job.sh");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().size(), 1u);
  EXPECT_EQ(r.value()[0].name, "NCCL_ALGO");
}

TEST(NcclSettings, MalformedLinesNameTheLine) {
  auto r = readNcclSettingsFile(src("testdata/nccl_env/malformed.sh"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("malformed.sh:2"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("unbalanced quotes"), std::string::npos) << r.error().message;
  auto q = readNcclSettings("export NCCL_DEBUG=\"INFO\n", "q.sh");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("q.sh:1: unbalanced quotes"), std::string::npos) << q.error().message;
  auto y = readNcclSettings("- name: NCCL_DEBUG\n- name: NCCL_ALGO\n  value: Ring\n", "p.yaml");
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().message.find("p.yaml:1: \"- name: NCCL_DEBUG\" has no"), std::string::npos) << y.error().message;
  auto missing = readNcclSettingsFile("/nonexistent/env.sh");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/env.sh"), std::string::npos);
}

}  // namespace settings_reader_test
}  // namespace gpudoctor
