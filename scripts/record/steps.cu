// A CUDA C++ program for `gpudoctor record`'s checks (scripts/record/record_checks.sh): STEPS steps
// of the same work, so the recording's kernel count and steps can be checked against what it
// launched. Per step: one pageable H2D copy, three kernels of different names launched KERNELS
// times in all, one CUDA graph replay of GRAPH_NODES kernels, a D2H copy and a stream sync.
// Prints one JSON line with what it launched.
//   nvcc -O2 -o steps steps.cu && ./steps [STEPS (20)] [KERNELS (30)] [GRAPH_NODES (8)]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
__global__ void square(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * x[i] * 0.5f;
}

#define CHECK(x)                                                   \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  int kernels = argc > 2 ? std::atoi(argv[2]) : 30;
  int nodes = argc > 3 ? std::atoi(argv[3]) : 8;
  const int n = 1 << 22;
  std::vector<float> host(n, 1.0f);
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  // The graph: `nodes` scale kernels captured once.
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < nodes; ++k) scale<<<(n + 255) / 256, 256, 0, s>>>(x, n, 0.999f);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  long launches = 0, graph_launches = 0;
  for (int step = 0; step < steps; ++step) {
    CHECK(cudaMemcpyAsync(y, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    for (int k = 0; k < kernels; ++k) {
      if (k % 3 == 0)
        scale<<<(n + 255) / 256, 256, 0, s>>>(x, n, 1.001f);
      else if (k % 3 == 1)
        add<<<(n + 255) / 256, 256, 0, s>>>(x, y, n);
      else
        square<<<(n + 255) / 256, 256, 0, s>>>(x, n);
      ++launches;
    }
    CHECK(cudaGraphLaunch(ge, s));
    ++graph_launches;
    CHECK(cudaMemcpyAsync(host.data(), x, sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaGetLastError());
  std::printf(
      "{\"steps\": %d, \"kernel_launches\": %ld, \"graph_launches\": %ld, \"graph_kernels\": %ld, \"kernels\": %ld}\n",
      steps, launches, graph_launches, graph_launches * nodes, launches + graph_launches * nodes);
  return 0;
}
