// The tuner plugin as NCCL sees it: dlopen the built library, find ncclTunerPlugin_v5, and call it
// with a cost table laid out as NCCL lays it out (float[algo][proto] passed as float**).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

struct TunerV5 {
  const char* name;
  int (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, void* log, void* nvl, void* constants);
  int (*getCollInfo)(void* ctx, int coll, size_t bytes, int numPipeOps, float** table, int numAlgo, int numProto,
                     int regBuff, int* nChannels);
  int (*finalize)(void* ctx);
};

TEST(TunerPlugin, AppliesTheConfigToNcclsCostTable) {
  auto cfg = std::filesystem::temp_directory_path() / "gpudoctor_tuner_test.csv";
  std::ofstream(cfg) << "# test\nallreduce,0,4095,tree,ll128,0\nallreduce,2097152,16777215,ring,ll,16\n"
                        "allgather,0,100,nvls,simple,0\nbogus line\n";
  setenv("GPUDOCTOR_TUNER_CONFIG", cfg.c_str(), 1);
  void* h = dlopen(GPUDOCTOR_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto* t = static_cast<const TunerV5*>(dlsym(h, "ncclTunerPlugin_v5"));
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->name, "gpudoctor");
  void* ctx = nullptr;
  ASSERT_EQ(t->init(&ctx, 1, 8, 1, nullptr, nullptr, nullptr), 0);
  float table[7][3];
  auto reset = [&] {
    for (auto& row : table)
      for (float& x : row) x = 1.0f;
    table[4][2] = -1.0f;  // NVLS/Simple disabled by NCCL
  };
  int nch = 0;
  // allreduce (4), 1 KiB: tree (0) / LL128 (1) forced to cost 0, nothing else touched.
  reset();
  ASSERT_EQ(t->getCollInfo(ctx, 4, 1024, 1, reinterpret_cast<float**>(table), 7, 3, 0, &nch), 0);
  EXPECT_EQ(table[0][1], 0.0f);
  int zeros = 0;
  for (auto& row : table)
    for (float x : row) zeros += x == 0.0f;
  EXPECT_EQ(zeros, 1);
  EXPECT_EQ(nch, 0);
  // 4 MiB: ring (1) / LL (0) with 16 channels.
  reset();
  t->getCollInfo(ctx, 4, 4u << 20, 1, reinterpret_cast<float**>(table), 7, 3, 0, &nch);
  EXPECT_EQ(table[1][0], 0.0f);
  EXPECT_EQ(nch, 16);
  // A size no rule covers: untouched.
  reset();
  nch = 0;
  t->getCollInfo(ctx, 4, 100u << 20, 1, reinterpret_cast<float**>(table), 7, 3, 0, &nch);
  for (auto& row : table)
    for (float x : row) EXPECT_NE(x, 0.0f);
  // A disabled entry (-1) is never forced.
  reset();
  t->getCollInfo(ctx, 2, 64, 1, reinterpret_cast<float**>(table), 7, 3, 0, &nch);
  EXPECT_EQ(table[4][2], -1.0f);
  EXPECT_EQ(t->finalize(ctx), 0);
  dlclose(h);
  std::filesystem::remove(cfg);
}

}  // namespace
