// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Stream-ordered device memory from the default pool, its high-water marks, and cuda_check.
#include <cstdint>
#include <cstdio>
#include <string>

#include "tprimat/backend/cuda.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {

void cuda_check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a sticky-free error so the next call starts clean
  // Other allocating runtime calls (graph instantiation, workspaces) can run out of memory too.
  if (status == cudaErrorMemoryAllocation)
    throw core::OutOfMemoryError(std::string(what) + ": " + cudaGetErrorString(status));
  throw core::RunError(std::string(what) + ": " + cudaGetErrorString(status));
}

namespace {

cudaMemPool_t current_pool() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cudaMemPool_t pool = nullptr;
  cuda_check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  // Keep freed memory in the pool: a step frees nothing, but the default threshold (0) would
  // hand memory back to the driver at every synchronisation and make the next allocation slow.
  std::uint64_t keep = UINT64_MAX;
  cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
             "cudaMemPoolSetAttribute(release threshold)");
  return pool;
}

std::size_t pool_attribute(cudaMemPoolAttr attr) {
  std::uint64_t value = 0;
  cuda_check(cudaMemPoolGetAttribute(current_pool(), attr, &value), "cudaMemPoolGetAttribute");
  return static_cast<std::size_t>(value);
}

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

}  // namespace

void* Cuda::allocate(std::size_t bytes, Stream stream) {
  void* p = nullptr;
  cudaMemPool_t pool = current_pool();
  const cudaError_t status = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0, total = 0;
    (void)cudaMemGetInfo(&free_bytes, &total);
    throw core::OutOfMemoryError(
        "out of GPU memory allocating " + gib(bytes) + " (" + gib(free_bytes) + " free of " +
        gib(total) + "); run fewer layers (--layers), a smaller micro-batch or more GPUs");
  }
  cuda_check(status, "cudaMallocFromPoolAsync");
  return p;
}

void Cuda::deallocate(void* p, Stream stream) {
  // Called from destructors: never throw, a failed free at exit is not worth a terminate.
  if (cudaFreeAsync(p, stream) != cudaSuccess) (void)cudaGetLastError();
}

std::size_t Cuda::peak_allocated_bytes() { return pool_attribute(cudaMemPoolAttrUsedMemHigh); }
std::size_t Cuda::peak_reserved_bytes() { return pool_attribute(cudaMemPoolAttrReservedMemHigh); }

void Cuda::reset_peaks() {
  std::uint64_t zero = 0;
  cudaMemPool_t pool = current_pool();
  cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), "reset peaks");
  cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero), "reset peaks");
}

int Cuda::device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace tprimat::backend
