// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's device memory (the default pool's stream-ordered allocations, high-water marks),
// devices, and gpu_check.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {

TPRIMAT_GPU_INLINE void gpu_check(gpuError_t status, const char* what) {
  if (status == gpuSuccess) return;
  (void)gpuGetLastError();  // clear a sticky-free error so the next call starts clean
  // Other allocating runtime calls (graph instantiation, workspaces) can run out of memory too.
  if (status == gpuErrorMemoryAllocation)
    throw core::OutOfMemoryError(std::string(what) + ": " + gpuGetErrorString(status));
  throw core::RunError(std::string(what) + ": " + gpuGetErrorString(status));
}

namespace detail::memory {

inline gpuMemPool_t current_pool() {
  int device = 0;
  gpu_check(gpuGetDevice(&device), "gpuGetDevice");
  gpuMemPool_t pool = nullptr;
  gpu_check(gpuDeviceGetDefaultMemPool(&pool, device), "gpuDeviceGetDefaultMemPool");
  // Keep freed memory in the pool: a step frees nothing, but the default threshold (0) would
  // hand memory back to the driver at every synchronisation and make the next allocation slow.
  std::uint64_t keep = UINT64_MAX;
  gpu_check(gpuMemPoolSetAttribute(pool, gpuMemPoolAttrReleaseThreshold, &keep),
            "gpuMemPoolSetAttribute(release threshold)");
  return pool;
}

inline std::size_t pool_attribute(gpuMemPoolAttr attr) {
  std::uint64_t value = 0;
  gpu_check(gpuMemPoolGetAttribute(current_pool(), attr, &value), "gpuMemPoolGetAttribute");
  return static_cast<std::size_t>(value);
}

inline std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

}  // namespace detail::memory

TPRIMAT_GPU_INLINE void* Gpu::allocate(std::size_t bytes, Stream stream) {
  void* p = nullptr;
  gpuMemPool_t pool = detail::memory::current_pool();
  const gpuError_t status = gpuMallocFromPoolAsync(&p, bytes, pool, stream);
  if (status == gpuErrorMemoryAllocation) {
    (void)gpuGetLastError();
    std::size_t free_bytes = 0, total = 0;
    (void)gpuMemGetInfo(&free_bytes, &total);
    throw core::OutOfMemoryError(
        "out of GPU memory allocating " + detail::memory::gib(bytes) + " (" +
        detail::memory::gib(free_bytes) + " free of " + detail::memory::gib(total) +
        "); run fewer layers, a smaller micro-batch, recomputation or more GPUs");
  }
  gpu_check(status, "gpuMallocFromPoolAsync");
  return p;
}

TPRIMAT_GPU_INLINE void Gpu::deallocate(void* p, Stream stream) {
  // Called from destructors: never throw, a failed free at exit is not worth a terminate.
  if (gpuFreeAsync(p, stream) != gpuSuccess) (void)gpuGetLastError();
}

TPRIMAT_GPU_INLINE std::size_t Gpu::peak_allocated_bytes() {
  return detail::memory::pool_attribute(gpuMemPoolAttrUsedMemHigh);
}
TPRIMAT_GPU_INLINE std::size_t Gpu::peak_reserved_bytes() {
  return detail::memory::pool_attribute(gpuMemPoolAttrReservedMemHigh);
}

TPRIMAT_GPU_INLINE void Gpu::reset_peaks() {
  std::uint64_t zero = 0;
  gpuMemPool_t pool = detail::memory::current_pool();
  gpu_check(gpuMemPoolSetAttribute(pool, gpuMemPoolAttrUsedMemHigh, &zero), "reset peaks");
  gpu_check(gpuMemPoolSetAttribute(pool, gpuMemPoolAttrReservedMemHigh, &zero), "reset peaks");
}

TPRIMAT_GPU_INLINE int Gpu::device_count() {
  int n = 0;
  if (gpuGetDeviceCount(&n) != gpuSuccess) {
    (void)gpuGetLastError();
    return 0;
  }
  return n;
}

TPRIMAT_GPU_INLINE void Gpu::use_device(int local_rank) {
  const int count = device_count();
  if (local_rank >= count)
    throw core::InputError("rank " + std::to_string(local_rank) +
                               " of this node has no GPU of its own: the node has " +
                               std::to_string(count) + " GPU(s) and each rank needs one",
                           "launch at most " + std::to_string(count) +
                               " ranks per node (mpirun --npernode " + std::to_string(count) +
                               ", srun --ntasks-per-node=" + std::to_string(count) + ")");
  gpu_check(gpuSetDevice(local_rank), "gpuSetDevice");
}

}  // namespace tprimat::backend
