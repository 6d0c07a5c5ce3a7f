#include "gpu/nccl_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "analysis/collectives.h"

namespace gpudoctor {

namespace {

struct Dtype {
  const char* name;
  int nccl;
  int bytes;
};
constexpr Dtype kDtypes[] = {{"float", nccl::kFloat32, 4},
                             {"half", nccl::kFloat16, 2},
                             {"bfloat16", nccl::kBfloat16, 2},
                             {"int32", nccl::kInt32, 4},
                             {"double", nccl::kFloat64, 8}};

uint16_t toHalf(float f) {  // exact for the small integers used here
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0) return static_cast<uint16_t>(sign);
  int e = static_cast<int>(exp) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13));
}
float fromHalf(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    float z = 0;
    std::memcpy(&z, &sign, 4);
    return mant == 0 ? z : std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.f : 1.f);
  }
  uint32_t x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void store(const Dtype& d, void* p, size_t i, double v) {
  switch (d.nccl) {
    case nccl::kFloat32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case nccl::kFloat64:
      static_cast<double*>(p)[i] = v;
      break;
    case nccl::kInt32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      break;
    case nccl::kFloat16:
      static_cast<uint16_t*>(p)[i] = toHalf(static_cast<float>(v));
      break;
    case nccl::kBfloat16: {
      float f = static_cast<float>(v);
      uint32_t x;
      std::memcpy(&x, &f, 4);
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(x >> 16);
      break;
    }
  }
}
double load(const Dtype& d, const void* p, size_t i) {
  switch (d.nccl) {
    case nccl::kFloat32:
      return static_cast<const float*>(p)[i];
    case nccl::kFloat64:
      return static_cast<const double*>(p)[i];
    case nccl::kInt32:
      return static_cast<const int32_t*>(p)[i];
    case nccl::kFloat16:
      return fromHalf(static_cast<const uint16_t*>(p)[i]);
    case nccl::kBfloat16: {
      uint32_t x = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &x, 4);
      return f;
    }
  }
  return 0;
}

// Input element i of rank r: small integers, exact in every dtype and in sums over a few hundred ranks.
double pattern(int r, size_t i) { return static_cast<double>((r % 7 + 1) * static_cast<int>(i % 5 + 1) % 16); }

// Element i of this rank's output after `coll` when every rank's input is pattern(rank, ·); chunk is
// the per-rank piece.
double expected(const std::string& coll, size_t i, size_t chunk, int rank, int nranks, int root) {
  double want = 0;
  if (coll == "allreduce" || coll == "reduce")
    for (int r = 0; r < nranks; ++r) want += pattern(r, i);
  else if (coll == "allgather")
    want = pattern(static_cast<int>(i / chunk), i % chunk);
  else if (coll == "reducescatter")
    for (int r = 0; r < nranks; ++r) want += pattern(r, static_cast<size_t>(rank) * chunk + i);
  else if (coll == "broadcast")
    want = pattern(root, i);
  else if (coll == "alltoall")
    want = pattern(static_cast<int>(i / chunk), static_cast<size_t>(rank) * chunk + i % chunk);
  else if (coll == "sendrecv")
    want = pattern((rank - 1 + nranks) % nranks, i);
  return want;
}

// A result row's description of one size: `total` elements of `dt`.
NcclBenchRow rowFor(const std::string& coll, const Dtype& dt, int64_t total, int root) {
  NcclBenchRow row;
  row.collective = coll;
  row.dtype = dt.name;
  row.bytes = total * dt.bytes;
  row.count = total;
  bool reduces = coll == "allreduce" || coll == "reducescatter" || coll == "reduce";
  row.redop = reduces ? "sum" : "none";
  row.root = coll == "broadcast" || coll == "reduce" ? root : -1;
  return row;
}

#define CUDA_TRY(x)                                                                                      \
  do {                                                                                                   \
    cudaError_t e_ = (x);                                                                                \
    if (e_ != cudaSuccess)                                                                               \
      return Error{fmt::format("CUDA error on device {}: {} ({})", device, cudaGetErrorString(e_), #x)}; \
  } while (0)

}  // namespace

Result<std::vector<NcclBenchRow>> runNcclBench(const NcclBenchOptions& opt, int rank, int nranks, int device,
                                               const nccl::UniqueId& id) {
  auto api_r = nccl::load();
  if (!api_r.ok()) return api_r.error();
  const nccl::Api& api = *api_r.value();
  const Dtype* dt = nullptr;
  for (const auto& d : kDtypes)
    if (opt.dtype == d.name) dt = &d;
  if (!dt) return Error{"unknown dtype \"" + opt.dtype + "\" (float, half, bfloat16, int32, double)"};
  CUDA_TRY(cudaSetDevice(device));
  nccl::Comm comm = nullptr;
  if (nccl::Result r = api.CommInitRank(&comm, nranks, id, rank); r != 0)
    return Error{fmt::format("rank {}: ncclCommInitRank failed: {}", rank, api.GetErrorString(r))};
  cudaStream_t stream;
  CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t t0, t1;
  CUDA_TRY(cudaEventCreate(&t0));
  CUDA_TRY(cudaEventCreate(&t1));
  // Buffers sized for the largest collective: allgather's receive side is nranks x the input.
  size_t max_elems = static_cast<size_t>(opt.max_bytes / dt->bytes) + 1;
  size_t buf_bytes = static_cast<size_t>(opt.max_bytes) + 64;
  void *send = nullptr, *recv = nullptr;
  CUDA_TRY(cudaMalloc(&send, buf_bytes));
  CUDA_TRY(cudaMalloc(&recv, buf_bytes));
  std::vector<char> host(buf_bytes), expect_buf;
  int64_t* dev_wrong = nullptr;
  CUDA_TRY(cudaMalloc(&dev_wrong, sizeof(int64_t)));
  std::vector<NcclBenchRow> rows;

  for (const auto& coll : opt.collectives) {
    for (double bytes_f = static_cast<double>(opt.min_bytes); bytes_f <= static_cast<double>(opt.max_bytes) * 1.000001;
         bytes_f = std::max(bytes_f * opt.factor, bytes_f + 1)) {
      // nccl-tests' "size": total bytes of the operation; per-rank counts follow from it.
      bool per_rank = coll == "allgather" || coll == "reducescatter" || coll == "alltoall";
      int64_t total = static_cast<int64_t>(bytes_f) / dt->bytes;
      if (per_rank) total = total / nranks * nranks;
      if (per_rank && total < nranks) continue;
      if (total <= 0) continue;
      size_t count = static_cast<size_t>(total);         // elements of the full buffer
      size_t chunk = per_rank ? count / nranks : count;  // per-rank piece
      if (count > max_elems) break;
      NcclBenchRow row = rowFor(coll, *dt, total, opt.root);
      for (int place = 0; place < (opt.in_place ? 2 : 1); ++place) {
        if (place == 1 && (coll == "alltoall" || coll == "sendrecv")) continue;
        // In place: allgather reads from recv + rank*chunk, reducescatter writes to send + rank*chunk.
        void* in = send;
        void* out = recv;
        size_t in_elems = coll == "allgather" ? chunk : count;
        size_t in_offset = 0;
        if (place == 1) {
          out = send;
          if (coll == "allgather") in_offset = static_cast<size_t>(rank) * chunk;
          in = static_cast<char*>(send) + in_offset * dt->bytes;
        }
        auto launch = [&]() -> nccl::Result {
          if (coll == "allreduce") return api.AllReduce(in, out, count, dt->nccl, nccl::kSum, comm, stream);
          if (coll == "allgather") return api.AllGather(in, out, chunk, dt->nccl, comm, stream);
          if (coll == "reducescatter")
            return api.ReduceScatter(
                in, place ? static_cast<char*>(send) + static_cast<size_t>(rank) * chunk * dt->bytes : out, chunk,
                dt->nccl, nccl::kSum, comm, stream);
          if (coll == "broadcast") return api.Broadcast(in, out, count, dt->nccl, opt.root, comm, stream);
          if (coll == "reduce") return api.Reduce(in, out, count, dt->nccl, nccl::kSum, opt.root, comm, stream);
          if (coll == "alltoall" || coll == "sendrecv") {
            api.GroupStart();
            if (coll == "alltoall") {
              for (int p = 0; p < nranks; ++p) {
                api.Send(static_cast<char*>(in) + static_cast<size_t>(p) * chunk * dt->bytes, chunk, dt->nccl, p, comm,
                         stream);
                api.Recv(static_cast<char*>(out) + static_cast<size_t>(p) * chunk * dt->bytes, chunk, dt->nccl, p, comm,
                         stream);
              }
            } else {
              api.Send(in, count, dt->nccl, (rank + 1) % nranks, comm, stream);
              api.Recv(out, count, dt->nccl, (rank - 1 + nranks) % nranks, comm, stream);
            }
            return api.GroupEnd();
          }
          return -1;
        };
        // Poison the output so that every element must be written, then fill the input with the pattern.
        if (place == 1 && coll == "allgather") CUDA_TRY(cudaMemset(send, 0xff, count * dt->bytes));
        if (place == 0) CUDA_TRY(cudaMemset(out, 0xff, count * dt->bytes));
        for (size_t i = 0; i < in_elems; ++i) store(*dt, host.data(), i, pattern(rank, i));
        CUDA_TRY(cudaMemcpy(in, host.data(), in_elems * dt->bytes, cudaMemcpyHostToDevice));
        CUDA_TRY(cudaDeviceSynchronize());
        // Barrier: a peer may write into this rank's buffers directly (P2P), so no rank may start
        // before every rank has poisoned and filled its own.
        {
          double* dev_b = reinterpret_cast<double*>(dev_wrong);
          api.AllReduce(dev_b, dev_b, 1, nccl::kFloat64, nccl::kSum, comm, stream);
          CUDA_TRY(cudaStreamSynchronize(stream));
        }
        if (nccl::Result r = launch(); r != 0)
          return Error{fmt::format("rank {}: {} of {} bytes failed: {}", rank, coll, row.bytes, api.GetErrorString(r))};
        CUDA_TRY(cudaStreamSynchronize(stream));
        int64_t wrong = 0;
        if (opt.check) {
          size_t out_elems = coll == "reducescatter" ? chunk : count;
          const void* res = coll == "reducescatter" && place == 1
                                ? static_cast<char*>(send) + static_cast<size_t>(rank) * chunk * dt->bytes
                                : out;
          bool has_output = !(coll == "reduce" && rank != opt.root);
          if (has_output) {
            CUDA_TRY(cudaMemcpy(host.data(), res, out_elems * dt->bytes, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < out_elems; ++i) {
              if (load(*dt, host.data(), i) != expected(coll, i, chunk, rank, nranks, opt.root)) ++wrong;
            }
          }
          // Every rank's count, summed: nccl-tests' #wrong.
          CUDA_TRY(cudaMemcpy(dev_wrong, &wrong, sizeof wrong, cudaMemcpyHostToDevice));
          api.AllReduce(dev_wrong, dev_wrong, 1, nccl::kInt64, nccl::kSum, comm, stream);
          CUDA_TRY(cudaStreamSynchronize(stream));
          CUDA_TRY(cudaMemcpy(&wrong, dev_wrong, sizeof wrong, cudaMemcpyDeviceToHost));
        }
        for (int w = 0; w < opt.warmup; ++w) launch();
        CUDA_TRY(cudaEventRecord(t0, stream));
        for (int it = 0; it < opt.iters; ++it) launch();
        CUDA_TRY(cudaEventRecord(t1, stream));
        CUDA_TRY(cudaEventSynchronize(t1));
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, t0, t1));
        double us = 1e3 * ms / opt.iters;
        // Ranks finish together, but the slowest one's time is the collective's: take the maximum.
        double* dev_t = reinterpret_cast<double*>(dev_wrong);
        CUDA_TRY(cudaMemcpy(dev_t, &us, sizeof us, cudaMemcpyHostToDevice));
        api.AllReduce(dev_t, dev_t, 1, nccl::kFloat64, nccl::kMax, comm, stream);
        CUDA_TRY(cudaStreamSynchronize(stream));
        CUDA_TRY(cudaMemcpy(&us, dev_t, sizeof us, cudaMemcpyDeviceToHost));
        row.time_us[place] = us;
        row.algbw[place] = static_cast<double>(row.bytes) / (us * 1e3);  // bytes/ns = GB/s
        row.busbw[place] = row.algbw[place] * busFactor(coll, nranks);
        row.wrong[place] = wrong;
      }
      rows.push_back(row);
      if (bytes_f >= static_cast<double>(opt.max_bytes)) break;
    }
  }
  cudaFree(send);
  cudaFree(recv);
  cudaFree(dev_wrong);
  api.CommDestroy(comm);
  return rows;
}

}  // namespace gpudoctor

#undef CUDA_TRY  // file-local: another file of a unity batch may define its own
