// What recording costs per launch, without a framework's noise: ITERS launches of a tiny kernel,
// each after SPIN_US microseconds of host work (a framework's per-op cost) and API_CALLS
// cudaGetDevice calls (frameworks make several per op; the recorder does not record them, but
// CUPTI may still see them). A stream sync every 100 launches. Prints one JSON line: ns per launch
// (the median of 9 blocks of ITERS/9 launches; the first block of 1,000 launches is warm-up).
//   nvcc -O2 -o launch_cost launch_cost.cu && ./launch_cost [ITERS (45000)] [SPIN_US (10)] [API_CALLS (3)]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void tiny(float* x) {
  if (threadIdx.x == 0 && x != nullptr) x[blockIdx.x] += 1.0f;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 45000;
  const double spin_us = argc > 2 ? std::atof(argv[2]) : 10;
  const int api_calls = argc > 3 ? std::atoi(argv[3]) : 3;
  if (iters < 9 || spin_us < 0 || api_calls < 0) {
    std::fprintf(stderr, "usage: launch_cost [ITERS >= 9] [SPIN_US >= 0] [API_CALLS >= 0]\n");
    return 2;
  }
  float* x = nullptr;
  if (cudaMalloc(&x, 64 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "launch_cost: no GPU\n");
    return 1;
  }
  cudaStream_t s;
  cudaStreamCreate(&s);
  using clk = std::chrono::steady_clock;
  auto spin = [&] {
    if (spin_us <= 0) return;
    auto until = clk::now() + std::chrono::nanoseconds(static_cast<long long>(spin_us * 1000));
    while (clk::now() < until) {
    }
  };
  auto launch = [&](int n) {
    for (int i = 0; i < n; ++i) {
      spin();
      int d = 0;
      for (int k = 0; k < api_calls; ++k) cudaGetDevice(&d);
      tiny<<<1, 32, 0, s>>>(x);
      if (i % 100 == 99) cudaStreamSynchronize(s);
    }
    cudaStreamSynchronize(s);
  };
  launch(1000);
  const int block = iters / 9;
  std::vector<double> per;
  for (int b = 0; b < 9; ++b) {
    auto t0 = clk::now();
    launch(block);
    per.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count() / block);
  }
  std::vector<double> sorted = per;
  std::sort(sorted.begin(), sorted.end());
  cudaError_t e = cudaGetLastError();
  std::printf("{\"launches\": %d, \"spin_us\": %g, \"api_calls\": %d, \"ns_per_launch\": %.1f, \"blocks_ns\": [",
              block * 9 + 1000, spin_us, api_calls, sorted[4]);
  for (int b = 0; b < 9; ++b) std::printf("%s%.1f", b ? ", " : "", per[b]);
  std::printf("], \"error\": \"%s\"}\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
