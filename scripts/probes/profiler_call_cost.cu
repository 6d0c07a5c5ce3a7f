// The runtime and driver calls that libraries such as cuDNN make outside any PyTorch operator, K at
// a time from C (no Python between calls), for scripts/probes/profiler_call_cost.py: it times each loop
// with and without torch.profiler in the same process. Build (sm_90: H100/H200):
//   nvcc -O2 -shared -Xcompiler -fPIC -cudart shared -gencode arch=compute_90,code=sm_90 \
//        -o libgd_callcost.so scripts/probes/profiler_call_cost.cu -lcuda
// Linked to the shared runtime by soname (libcudart.so.13): loaded after torch, it uses the runtime
// torch loaded, the one the profiler's CUPTI hooks. Every entry point returns the first CUDA error
// (0: none).
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void gd_empty() {}

extern "C" {

// <<<1, 1, 0, stream>>>: cudaLaunchKernel.
int gd_launch(int k, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < k; ++i) gd_empty<<<1, 1, 0, s>>>();
  return static_cast<int>(cudaGetLastError());
}

// cudaLaunchKernelEx (traced as cudaLaunchKernelExC), as cuDNN's and CUTLASS's launches are.
int gd_launch_ex(int k, void* stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(1);
  cfg.stream = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < k; ++i) {
    cudaError_t e = cudaLaunchKernelEx(&cfg, gd_empty);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return 0;
}

// cuLaunchKernel (the driver API), on the same kernel.
int gd_cu_launch(int k, void* stream) {
  cudaFunction_t f = nullptr;
  cudaError_t e = cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(gd_empty));
  if (e != cudaSuccess) return static_cast<int>(e);
  CUfunction cf = reinterpret_cast<CUfunction>(f);
  CUstream s = static_cast<CUstream>(stream);
  for (int i = 0; i < k; ++i) {
    CUresult r = cuLaunchKernel(cf, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr);
    if (r != CUDA_SUCCESS) return 1000 + static_cast<int>(r);
  }
  return 0;
}

// cudaFuncGetAttributes: cuDNN's LSTM makes about 1.7 per kernel it launches.
int gd_func_attributes(int k) {
  cudaFuncAttributes a;
  for (int i = 0; i < k; ++i) {
    cudaError_t e = cudaFuncGetAttributes(&a, gd_empty);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return 0;
}

// cudaMemsetAsync of 4 bytes.
int gd_memset(int k, void* ptr, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  for (int i = 0; i < k; ++i) {
    cudaError_t e = cudaMemsetAsync(ptr, 0, 4, s);
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return 0;
}

// cudaGetErrorString: the call that launches nothing, from C (profiler_api_cost.py made it from
// Python, one ctypes call each).
int gd_error_string(int k) {
  const char* volatile p = nullptr;
  for (int i = 0; i < k; ++i) p = cudaGetErrorString(cudaSuccess);
  return p ? 0 : 1;
}

// cuDNN's LSTM pattern per kernel: cudaFuncGetAttributes twice, then the launch.
int gd_attrs_launch(int k, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaFuncAttributes a;
  for (int i = 0; i < k; ++i) {
    cudaFuncGetAttributes(&a, gd_empty);
    cudaFuncGetAttributes(&a, gd_empty);
    gd_empty<<<1, 1, 0, s>>>();
  }
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
