// `nccl env` judgement over a fake /sys tree: a block mixing real, unknown, deprecated,
// out-of-range, host-mismatched and performance-hostile settings gets exactly the expected
// verdicts; versions and the table's facts are honoured.
#include "diagnosis/nccl_env_check.h"
#include "probes/host_net.h"
#include "sources/nccl_env/settings_reader.h"

#include <gtest/gtest.h>

#include <map>

namespace gpudoctor {
namespace nccl_env_check_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

std::multimap<std::string, EnvVerdict> verdicts(const std::vector<EnvFinding>& f) {
  std::multimap<std::string, EnvVerdict> m;
  for (const auto& x : f) m.emplace(x.name, x.verdict);
  return m;
}

std::vector<EnvFinding> check(const std::string& text, NcclVersion v, const HostNet* host, bool multi = false) {
  auto s = readNcclSettings(text, "t.sh");
  EXPECT_TRUE(s.ok()) << s.error().message;
  EnvCheckOptions o;
  o.version = v;
  o.host = host;
  o.multi_node = multi;
  return checkNcclEnv(s.value(), NcclVarTable::builtin(), o);
}

TEST(NcclEnv, TableIsComplete) {
  const auto& t = NcclVarTable::builtin();
  EXPECT_GT(t.all().size(), 100u);
  for (auto name : {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
                    "NCCL_NTHREADS", "NCCL_BUFFSIZE", "NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL", "NCCL_DEBUG",
                    "NCCL_DEBUG_SUBSYS", "NCCL_TOPO_FILE", "NCCL_NVLS_ENABLE", "NCCL_TUNER_PLUGIN"})
    EXPECT_NE(t.find(name), nullptr) << name;
  // Common bad advice does not exist.
  EXPECT_EQ(t.find("NCCL_AVOID_NODE0"), nullptr);
  EXPECT_EQ(t.find("NCCL_PROFILE"), nullptr);
  EXPECT_EQ(t.find("NCCL_MIN_NCHANNELS")->replacement, "NCCL_MIN_CTAS");
}

TEST(NcclEnv, MixedBlockGetsExactlyTheExpectedVerdicts) {
  HostNet host = probeHostNet(src("testdata/sysroot/ib_node"));
  ASSERT_EQ(host.interfaces.size(), 4u);
  ASSERT_TRUE(host.any_active_ib());
  auto s = readNcclSettingsFile(src("testdata/nccl_env/mixed.sh"));
  ASSERT_TRUE(s.ok());
  probeSettingFiles(host, s.value());
  EnvCheckOptions o;
  o.version = parseNcclVersion("2.28.3").value();
  o.host = &host;
  o.multi_node = true;
  auto f = checkNcclEnv(s.value(), NcclVarTable::builtin(), o);
  using V = EnvVerdict;
  const std::multimap<std::string, EnvVerdict> expected = {
      {"NCCL_DEBUG", V::kSlow},           {"NCCL_DEBUG_SUBSYS", V::kWrong}, {"NCCL_SOCKET_IFNAME", V::kWrong},
      {"NCCL_IB_HCA", V::kWrong},         {"NCCL_ALGO", V::kSlow},          {"NCCL_PROTO", V::kFine},
      {"NCCL_MIN_NCHANNELS", V::kWrong},  {"NCCL_MIN_CTAS", V::kWrong},     {"NCCL_MAX_CTAS", V::kSlow},
      {"NCCL_NTHREADS", V::kWrong},       {"NCCL_BUFFSIZE", V::kWrong},     {"NCCL_AVOID_NODE0", V::kIgnored},
      {"NCCL_SOCKET_IFNAM", V::kIgnored}, {"NCCL_IB_DISABLE", V::kSlow},    {"NCCL_NVLS_ENABLE", V::kIntentional},
      {"NCCL_P2P_LEVEL", V::kWrong},      {"NCCL_TOPO_FILE", V::kWrong},    {"NCCL_NET_GDR_LEVEL", V::kIgnored},
      {"NCCL_CROSS_NIC", V::kFine}};
  EXPECT_EQ(verdicts(f), expected);
  for (const auto& x : f) {
    EXPECT_FALSE(x.reason.empty()) << x.name;
    EXPECT_NE(x.origin.find("mixed.sh:"), std::string::npos);
    if (x.name == "NCCL_SOCKET_IFNAM") {
      EXPECT_NE(x.reason.find("did you mean NCCL_SOCKET_IFNAME"), std::string::npos);
    }
    if (x.name == "NCCL_MIN_NCHANNELS") {
      EXPECT_EQ(x.fix, "NCCL_MIN_CTAS=4");
    }
    if (x.name == "NCCL_IB_HCA") {
      EXPECT_NE(x.reason.find("mlx5_1"), std::string::npos);
    }
    if (x.name == "NCCL_SOCKET_IFNAME") {
      EXPECT_NE(x.reason.find("eth0"), std::string::npos);  // lists what exists
    }
  }
}

TEST(NcclEnv, Versions) {
  // Too old for the CTA names; deprecated and removed names.
  auto old = verdicts(check("NCCL_MIN_CTAS=4\n", parseNcclVersion("2.16.5").value(), nullptr));
  EXPECT_EQ(old.find("NCCL_MIN_CTAS")->second, EnvVerdict::kIgnored);
  auto now = verdicts(check("NCCL_MIN_CTAS=4\n", parseNcclVersion("2.28.3").value(), nullptr));
  EXPECT_EQ(now.find("NCCL_MIN_CTAS")->second, EnvVerdict::kFine);
  auto rings = check("NCCL_RINGS=\"0 1|1 0\"\n", parseNcclVersion("2.28.3").value(), nullptr);
  EXPECT_EQ(rings[0].verdict, EnvVerdict::kIgnored);
  EXPECT_NE(rings[0].reason.find("removed"), std::string::npos);
  EXPECT_FALSE(parseNcclVersion("2.x").ok());
  EXPECT_FALSE(parseNcclVersion("3.1.0").ok());
  EXPECT_EQ(parseNcclVersion("2.28.3-1").value(), 22803);
  EXPECT_EQ(parseNcclVersion("22803").value(), 22803);
  EXPECT_EQ(ncclVersionString(22803), "2.28.3");
}

TEST(NcclEnv, ValuesAsNcclParsesThem) {
  NcclVersion v = parseNcclVersion("2.28.3").value();
  auto f =
      verdicts(check("NCCL_P2P_LEVEL=phb\nNCCL_NET_GDR_LEVEL=PIX\nNCCL_BUFFSIZE=0x800000\n"
                     "NCCL_ALGO=allreduce:tree,ring;broadcast:ring\nNCCL_PROTO=Simple\nNCCL_ALGO_X=1\n"
                     "NCCL_NTHREADS=512\nNCCL_DEBUG_SUBSYS=^ALL\n",
                     v, nullptr));
  EXPECT_EQ(f.find("NCCL_P2P_LEVEL")->second, EnvVerdict::kWrong);  // strcmp: uppercase only
  EXPECT_EQ(f.find("NCCL_NET_GDR_LEVEL")->second, EnvVerdict::kFine);
  EXPECT_EQ(f.find("NCCL_BUFFSIZE")->second, EnvVerdict::kFine);  // strtoll base 0 takes hex
  EXPECT_EQ(f.find("NCCL_ALGO")->second, EnvVerdict::kFine);      // per-collective choices are deliberate
  EXPECT_EQ(f.find("NCCL_PROTO")->second, EnvVerdict::kSlow);     // one protocol for every size
  EXPECT_EQ(f.find("NCCL_NTHREADS")->second, EnvVerdict::kFine);
  EXPECT_EQ(f.find("NCCL_DEBUG_SUBSYS")->second, EnvVerdict::kFine);
}

// NAME= sets the variable to nothing: never "fine", whatever its type.
TEST(NcclEnv, AnEmptyValueIsWrong) {
  NcclVersion v = parseNcclVersion("2.28.3").value();
  auto f = verdicts(check("NCCL_ALGO=\nNCCL_IB_DISABLE=\nNCCL_BUFFSIZE=\n", v, nullptr));
  for (const char* name : {"NCCL_ALGO", "NCCL_IB_DISABLE", "NCCL_BUFFSIZE"}) {
    ASSERT_NE(f.find(name), f.end()) << name;
    EXPECT_EQ(f.find(name)->second, EnvVerdict::kWrong) << name;
  }
}

TEST(NcclEnv, HostWithoutInfiniBand) {
  HostNet host = probeHostNet(src("testdata/sysroot/plain_node"));
  auto f = check("NCCL_SOCKET_IFNAME=ens\nNCCL_NET_GDR_LEVEL=SYS\nNCCL_IB_HCA=mlx5\n", 22803, &host, true);
  auto m = verdicts(f);
  EXPECT_EQ(m.find("NCCL_SOCKET_IFNAME")->second, EnvVerdict::kFine);  // prefix "ens" matches ens5
  EXPECT_EQ(m.find("NCCL_NET_GDR_LEVEL")->second, EnvVerdict::kIgnored);
  EXPECT_EQ(m.find("NCCL_IB_HCA")->second, EnvVerdict::kWrong);
}

TEST(NcclEnv, RealLogSettingsAreRecognised) {
  // NCCL INFO lines from a real 2 x H200 run (scripts/testdata/make_nccl_log.py), committed in testdata.
  auto s = readNcclSettingsFile(src("testdata/nccl_logs/ddp_2xh200_info.log"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_FALSE(s.value().empty());
  EnvCheckOptions o;
  o.version = parseNcclVersion("2.28.9").value();
  auto f = checkNcclEnv(s.value(), NcclVarTable::builtin(), o);
  for (const auto& x : f) {
    EXPECT_NE(x.verdict, EnvVerdict::kIgnored) << x.name << ": " << x.reason;
    EXPECT_NE(x.verdict, EnvVerdict::kWrong) << x.name << ": " << x.reason;
  }
}

}  // namespace nccl_env_check_test
}  // namespace gpudoctor
