// The flash-attention kernels' own code (flash_attention_kernels.inc) run on the host: 128 threads per
// block, __syncthreads as a barrier, and the warp primitives (mma.sync m16n8k16, ldmatrix and its
// .trans form, shuffles, cp.async) emulated from the PTX ISA's fragment layouts. It checks the index
// arithmetic, the online softmax, the causal mask and the two-stage pipeline against FP64 without a
// GPU; what it cannot check is that the hardware's layouts are the ones written here (the GPU tests do).
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "common/numeric_check.h"

namespace gpudoctor::gpubench {
namespace flash_attention_emulation_test {
struct WarpCtx {
  std::barrier<> bar{32};
  uint32_t u[32][8];
  float f[32][4];
  const void* addr[32];
};
thread_local uint3 emuThread, emuBlock;
thread_local dim3 emuGrid;
std::barrier<>* g_block_barrier = nullptr;
WarpCtx* g_warps = nullptr;
alignas(16) unsigned char g_dynamic_smem[2 * 2 * 64 * (128 + 8) * 2];

int laneId() { return static_cast<int>(emuThread.x & 31); }
WarpCtx& warpCtx() { return g_warps[emuThread.x >> 5]; }

void syncThreadsEmu() { g_block_barrier->arrive_and_wait(); }

float shflXorEmu(unsigned, float v, int mask) {
  WarpCtx& w = warpCtx();
  int l = laneId();
  w.f[l][0] = v;
  w.bar.arrive_and_wait();
  float r = w.f[l ^ mask][0];
  w.bar.arrive_and_wait();
  return r;
}

float bf(uint32_t bits16) { return static_cast<float>(bf16ToDouble(static_cast<uint16_t>(bits16 & 0xffff))); }

// D = A·B + C for one m16n8k16 (bf16 in, fp32 accumulate), fragments as the PTX ISA lays them out.
void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  WarpCtx& w = warpCtx();
  int l = laneId();
  for (int i = 0; i < 4; ++i) w.u[l][i] = a[i];
  w.u[l][4] = b0;
  w.u[l][5] = b1;
  w.bar.arrive_and_wait();
  float A[16][16], B[16][8];
  for (int L = 0; L < 32; ++L) {
    int g = L >> 2, t = L & 3;
    const uint32_t* r = w.u[L];
    A[g][2 * t] = bf(r[0]), A[g][2 * t + 1] = bf(r[0] >> 16);
    A[g + 8][2 * t] = bf(r[1]), A[g + 8][2 * t + 1] = bf(r[1] >> 16);
    A[g][2 * t + 8] = bf(r[2]), A[g][2 * t + 9] = bf(r[2] >> 16);
    A[g + 8][2 * t + 8] = bf(r[3]), A[g + 8][2 * t + 9] = bf(r[3] >> 16);
    B[2 * t][g] = bf(r[4]), B[2 * t + 1][g] = bf(r[4] >> 16);
    B[2 * t + 8][g] = bf(r[5]), B[2 * t + 9][g] = bf(r[5] >> 16);
  }
  int g = l >> 2, t = l & 3;
  const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
  float out[4];
  for (int i = 0; i < 4; ++i) {
    float s = c[i];
    for (int k = 0; k < 16; ++k) s += A[rows[i]][k] * B[k][cols[i]];
    out[i] = s;
  }
  w.bar.arrive_and_wait();
  for (int i = 0; i < 4; ++i) c[i] = out[i];
}

uint32_t packBf16(float lo, float hi) {
  return static_cast<uint32_t>(doubleToBf16(lo)) | (static_cast<uint32_t>(doubleToBf16(hi)) << 16);
}
uint32_t load32(const __nv_bfloat16* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void cpAsync16(void* smem, const void* gmem) { std::memcpy(smem, gmem, 16); }  // at issue: stricter than async
void cpAsyncCommit() {}
void cpAsyncWaitAllButOne() {}
void ldmatrixEmu(uint32_t (&r)[4], const void* row, bool trans) {
  WarpCtx& w = warpCtx();
  int l = laneId();
  w.addr[l] = row;
  w.bar.arrive_and_wait();
  int g = l >> 2, t = l & 3;
  for (int j = 0; j < 4; ++j) {
    uint16_t lo, hi;
    if (!trans) {  // thread (g, t): matrix j, row g, columns 2t and 2t + 1
      const uint16_t* p = static_cast<const uint16_t*>(w.addr[8 * j + g]);
      lo = p[2 * t], hi = p[2 * t + 1];
    } else {  // .trans: rows 2t and 2t + 1, column g
      lo = static_cast<const uint16_t*>(w.addr[8 * j + 2 * t])[g];
      hi = static_cast<const uint16_t*>(w.addr[8 * j + 2 * t + 1])[g];
    }
    r[j] = lo | (static_cast<uint32_t>(hi) << 16);
  }
  w.bar.arrive_and_wait();
}
void ldmatrixX4(uint32_t (&r)[4], const void* row) { ldmatrixEmu(r, row, false); }
void ldmatrixX4Trans(uint32_t (&r)[4], const void* row) { ldmatrixEmu(r, row, true); }
unsigned char* dynamicSmem() { return g_dynamic_smem; }

constexpr int kBr = 64;
constexpr int kBc = 64;

// The kernels' source sees CUDA's names; here they mean the emulation.
#undef __global__
#define __global__
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __shared__
#define __shared__ static
#define threadIdx emuThread
#define blockIdx emuBlock
#define gridDim emuGrid
#define __syncthreads syncThreadsEmu
#define __shfl_xor_sync shflXorEmu
#include "gpu/bench/flash_attention_kernels.inc"
#undef threadIdx
#undef blockIdx
#undef gridDim
#undef __syncthreads
#undef __shfl_xor_sync

// Runs one kernel over the grid, block after block, 128 host threads per block.
template <class Kernel>
void launch(dim3 grid, Kernel kernel) {
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      std::barrier<> block_barrier(128);
      std::unique_ptr<WarpCtx[]> warps(new WarpCtx[4]);
      g_block_barrier = &block_barrier;
      g_warps = warps.get();
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < 128; ++t)
        threads.emplace_back([&, t] {
          emuThread = uint3{t, 0, 0};
          emuBlock = uint3{bx, by, 0};
          emuGrid = grid;
          kernel();
        });
      for (auto& th : threads) th.join();
    }
}

struct Case {
  int heads, seq, d;
  bool causal, pipelined;
};

void runCase(const Case& c) {
  size_t n = static_cast<size_t>(c.heads) * c.seq * c.d;
  std::vector<uint16_t> q(n), k(n), v(n), o(n, static_cast<uint16_t>(poisonBits(NumFormat::kBf16)));
  std::mt19937_64 rng(12345 + c.seq + c.d + c.causal * 7 + c.pipelined * 13);
  uint64_t seed = rng();
  for (size_t i = 0; i < n; ++i) {
    q[i] = doubleToBf16(uniformAt(seed, i, 2.0));
    k[i] = doubleToBf16(uniformAt(seed + 1, i, 2.0));
    v[i] = doubleToBf16(uniformAt(seed + 2, i, 1.0));
  }
  auto* Q = reinterpret_cast<const __nv_bfloat16*>(q.data());
  auto* K = reinterpret_cast<const __nv_bfloat16*>(k.data());
  auto* V = reinterpret_cast<const __nv_bfloat16*>(v.data());
  auto* O = reinterpret_cast<__nv_bfloat16*>(o.data());
  float sl = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)) * 1.4426950408889634);
  dim3 grid(static_cast<unsigned>(c.seq / kBr), static_cast<unsigned>(c.heads));
  auto go = [&](auto kernel) { launch(grid, [&] { kernel(Q, K, V, O, c.seq, sl); }); };
  if (c.d == 64 && c.causal)
    c.pipelined ? go(flashAttentionForwardPipelined<64, true>) : go(flashAttentionForward<64, true>);
  if (c.d == 64 && !c.causal)
    c.pipelined ? go(flashAttentionForwardPipelined<64, false>) : go(flashAttentionForward<64, false>);
  if (c.d == 128 && c.causal)
    c.pipelined ? go(flashAttentionForwardPipelined<128, true>) : go(flashAttentionForward<128, true>);
  if (c.d == 128 && !c.causal)
    c.pipelined ? go(flashAttentionForwardPipelined<128, false>) : go(flashAttentionForward<128, false>);
  // Every output element against FP64.
  std::vector<double> ref(n);
  double ss = 0;
  for (int h = 0; h < c.heads; ++h)
    for (int r = 0; r < c.seq; ++r) {
      size_t base = static_cast<size_t>(h) * c.seq * c.d;
      int valid = c.causal ? r + 1 : c.seq;
      std::vector<double> p(valid);
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < valid; ++j) {
        double dot = 0;
        for (int l = 0; l < c.d; ++l) dot += bf16ToDouble(q[base + r * c.d + l]) * bf16ToDouble(k[base + j * c.d + l]);
        p[j] = dot / std::sqrt(static_cast<double>(c.d));
        mx = std::max(mx, p[j]);
      }
      for (int j = 0; j < valid; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int l = 0; l < c.d; ++l) {
        double acc = 0;
        for (int j = 0; j < valid; ++j) acc += p[j] / sum * bf16ToDouble(v[base + j * c.d + l]);
        ref[base + r * c.d + l] = acc;
        ss += acc * acc;
      }
    }
  double rms = std::sqrt(ss / static_cast<double>(n));
  ErrorStats es;
  for (size_t i = 0; i < n; ++i) addError(es, bf16ToDouble(o[i]), ref[i], attentionBound(ref[i], rms));
  EXPECT_TRUE(es.passed()) << "heads " << c.heads << " seq " << c.seq << " d " << c.d << (c.causal ? " causal" : "")
                           << (c.pipelined ? " pipelined" : " simple") << ": " << es.summary();
  EXPECT_EQ(es.checked, static_cast<int64_t>(n));
}

// Every output element of every case, fresh inputs per case; d 64 and 128, causal or not, several
// query blocks and heads (block order reversed), several key tiles.
TEST(FlashAttentionEmulation, SimpleKernelMatchesFp64) {
  runCase({1, 128, 64, true, false});
  runCase({1, 128, 64, false, false});
  runCase({2, 128, 128, false, false});
  runCase({1, 192, 128, true, false});
}

TEST(FlashAttentionEmulation, PipelinedKernelMatchesFp64) {
  runCase({1, 128, 64, true, true});
  runCase({1, 128, 64, false, true});
  runCase({2, 192, 128, false, true});  // three tiles: both stages reused
  runCase({1, 192, 128, true, true});
}

}  // namespace flash_attention_emulation_test
}  // namespace gpudoctor::gpubench
