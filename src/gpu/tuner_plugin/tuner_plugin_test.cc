// The tuner plugin as NCCL sees it: dlopen the built library, find ncclTunerPlugin_v5 (and v4/v3),
// and call it with a cost table laid out as NCCL lays it out (float[algo][proto] passed as float**)
// and a logger that records what the plugin tells NCCL.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct TunerV5 {
  const char* name;
  int (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, void* log, void* nvl, void* constants);
  int (*getCollInfo)(void* ctx, int coll, size_t bytes, int numPipeOps, float** table, int numAlgo, int numProto,
                     int regBuff, int* nChannels);
  int (*finalize)(void* ctx);
};
struct TunerV4 {
  const char* name;
  int (*init)(size_t nRanks, size_t nNodes, void* log, void** ctx);
  int (*getCollInfo)(void* ctx, int coll, size_t bytes, int numPipeOps, float** table, int numAlgo, int numProto,
                     int regBuff, int* nChannels);
  int (*destroy)(void* ctx);
};
struct TunerV3 {
  const char* name;
  int (*init)(size_t nRanks, size_t nNodes, void* log, void** ctx);
  int (*getCollInfo)(void* ctx, int coll, size_t bytes, int numPipeOps, float** table, int numAlgo, int numProto,
                     int* nChannels);
  int (*destroy)(void* ctx);
};

std::vector<std::pair<int, std::string>> g_log;
void logger(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_log.emplace_back(level, buf);
}

class TunerPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = dlopen(GPUDOCTOR_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h_, nullptr) << dlerror();
    t_ = static_cast<const TunerV5*>(dlsym(h_, "ncclTunerPlugin_v5"));
    ASSERT_NE(t_, nullptr);
    g_log.clear();
  }
  void TearDown() override {
    if (h_) dlclose(h_);
    unsetenv("GPUDOCTOR_TUNER_CONFIG");
    std::filesystem::remove(cfg_);
  }
  void config(const std::string& text) {
    std::ofstream(cfg_) << text;
    setenv("GPUDOCTOR_TUNER_CONFIG", cfg_.c_str(), 1);
  }
  void reset() {
    for (auto& row : table_)
      for (float& x : row) x = 1.0f;
    table_[4][2] = -1.0f;  // NVLS/Simple disabled by NCCL
  }
  float** table() { return reinterpret_cast<float**>(table_); }
  int zeros() const {
    int n = 0;
    for (auto& row : table_)
      for (float x : row) n += x == 0.0f;
    return n;
  }
  void* h_ = nullptr;
  const TunerV5* t_ = nullptr;
  float table_[7][3];
  std::filesystem::path cfg_ =
      std::filesystem::temp_directory_path() / ("gpudoctor_tuner_" + std::to_string(getpid()) + ".csv");
};

TEST_F(TunerPlugin, AppliesTheConfigToNcclsCostTable) {
  config(
      "# test\nallreduce,0,4095,tree,ll128,0\nAllReduce, 2097152, 16777215, Ring, LL, 16\n"
      "allgather,0,100,nvls,simple,0\nreducescatter,0,100,default,default,4\n");
  EXPECT_STREQ(t_->name, "gpudoctor");
  void* ctx = nullptr;
  ASSERT_EQ(t_->init(&ctx, 1, 8, 1, reinterpret_cast<void*>(&logger), nullptr, nullptr), 0);
  ASSERT_FALSE(g_log.empty());
  EXPECT_EQ(g_log.back().first, 3);  // INFO: proves the plugin loaded and what it read
  EXPECT_NE(g_log.back().second.find("4 of 4 rules"), std::string::npos) << g_log.back().second;
  int nch = 0;
  // allreduce (4), 1 KiB: tree (0) / LL128 (1) forced to cost 0, nothing else touched.
  reset();
  ASSERT_EQ(t_->getCollInfo(ctx, 4, 1024, 1, table(), 7, 3, 0, &nch), 0);
  EXPECT_EQ(table_[0][1], 0.0f);
  EXPECT_EQ(zeros(), 1);
  EXPECT_EQ(nch, 0);
  // 4 MiB: ring (1) / LL (0) with 16 channels.
  reset();
  t_->getCollInfo(ctx, 4, 4u << 20, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(table_[1][0], 0.0f);
  EXPECT_EQ(nch, 16);
  // A size no rule covers: untouched, channel count left to NCCL.
  reset();
  nch = 0;
  t_->getCollInfo(ctx, 4, 100u << 20, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(zeros(), 0);
  EXPECT_EQ(nch, 0);
  // A disabled entry (-1) is never forced.
  reset();
  t_->getCollInfo(ctx, 2, 64, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(table_[4][2], -1.0f);
  EXPECT_EQ(zeros(), 0);
  // Channels only: the cost table stays NCCL's.
  reset();
  t_->getCollInfo(ctx, 3, 64, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(zeros(), 0);
  EXPECT_EQ(nch, 4);
  EXPECT_EQ(t_->finalize(ctx), 0);
}

TEST_F(TunerPlugin, RulesMatchTheCommunicatorShape) {
  config("allreduce,0,1000,tree,ll,0,8,1\nallreduce,0,1000,ring,simple,0,16,2\n");
  void* ctx = nullptr;
  ASSERT_EQ(t_->init(&ctx, 1, 16, 2, reinterpret_cast<void*>(&logger), nullptr, nullptr), 0);
  int nch = 0;
  reset();
  t_->getCollInfo(ctx, 4, 512, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(table_[1][2], 0.0f);  // the 16-rank, 2-node rule
  EXPECT_EQ(zeros(), 1);
  t_->finalize(ctx);
  // A shape no rule names: nothing applies.
  ASSERT_EQ(t_->init(&ctx, 1, 4, 1, reinterpret_cast<void*>(&logger), nullptr, nullptr), 0);
  reset();
  t_->getCollInfo(ctx, 4, 512, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(zeros(), 0);
  t_->finalize(ctx);
}

// A malformed file must never half-apply or crash the job: the whole file is ignored, a warning
// names the file and line, and NCCL's defaults apply.
TEST_F(TunerPlugin, MalformedConfigFallsBackToNcclsDefaults) {
  for (const char* bad :
       {"allreduce,0,4095,tree,ll128,0\nbogus line\n", "allreduce,0,4095,tree,ll128\n",
        "allreduce,4096,0,tree,ll128,0\n", "allreduce,0,4095,warp,ll128,0\n", "allreduce,0,4095,tree,ll256,0\n",
        "sendrecv,0,4095,tree,ll,0\n", "allreduce,-1,4095,tree,ll,0\n", "allreduce,0,4095,tree,ll,x\n",
        "allreduce,0,99999999999999999999999,tree,ll,0\n", "allreduce,0,4095,tree,ll,0,8\n",
        "allreduce,0,4095,default,default,0\n", "allreduce,0,4095,default,ll,4\n"}) {
    SCOPED_TRACE(bad);
    config(bad);
    g_log.clear();
    void* ctx = nullptr;
    ASSERT_EQ(t_->init(&ctx, 1, 8, 1, reinterpret_cast<void*>(&logger), nullptr, nullptr), 0);
    ASSERT_FALSE(g_log.empty());
    EXPECT_EQ(g_log.back().first, 2);  // WARN
    EXPECT_NE(g_log.back().second.find(cfg_.string() + ":"), std::string::npos) << g_log.back().second;
    EXPECT_NE(g_log.back().second.find("defaults apply"), std::string::npos);
    int nch = 0;
    reset();
    ASSERT_EQ(t_->getCollInfo(ctx, 4, 1024, 1, table(), 7, 3, 0, &nch), 0);
    EXPECT_EQ(zeros(), 0);
    EXPECT_EQ(nch, 0);
    t_->finalize(ctx);
  }
  // A missing file: a warning, defaults. No logger from NCCL: still no crash.
  setenv("GPUDOCTOR_TUNER_CONFIG", "/nonexistent/tuner.csv", 1);
  g_log.clear();
  void* ctx = nullptr;
  ASSERT_EQ(t_->init(&ctx, 1, 8, 1, reinterpret_cast<void*>(&logger), nullptr, nullptr), 0);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().second.find("/nonexistent/tuner.csv"), std::string::npos);
  t_->finalize(ctx);
  ASSERT_EQ(t_->init(&ctx, 1, 8, 1, nullptr, nullptr, nullptr), 0);
  t_->finalize(ctx);
}

// NCCL 2.21-2.27 look for v4 / v3: the same rules through the older entry points.
TEST_F(TunerPlugin, OlderInterfaceVersions) {
  config("allreduce,0,4095,tree,ll128,0\n");
  for (const char* sym : {"ncclTunerPlugin_v4", "ncclTunerPlugin_v3"}) {
    SCOPED_TRACE(sym);
    ASSERT_NE(dlsym(h_, sym), nullptr);
  }
  auto* v4 = static_cast<const TunerV4*>(dlsym(h_, "ncclTunerPlugin_v4"));
  auto* v3 = static_cast<const TunerV3*>(dlsym(h_, "ncclTunerPlugin_v3"));
  void* ctx = nullptr;
  ASSERT_EQ(v4->init(8, 1, nullptr, &ctx), 0);
  int nch = 0;
  reset();
  v4->getCollInfo(ctx, 4, 1024, 1, table(), 7, 3, 0, &nch);
  EXPECT_EQ(table_[0][1], 0.0f);
  v4->destroy(ctx);
  ASSERT_EQ(v3->init(8, 1, nullptr, &ctx), 0);
  reset();
  v3->getCollInfo(ctx, 4, 1024, 1, table(), 7, 3, &nch);
  EXPECT_EQ(table_[0][1], 0.0f);
  EXPECT_EQ(zeros(), 1);
  v3->destroy(ctx);
}

}  // namespace
