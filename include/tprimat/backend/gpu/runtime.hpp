// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The host side of the portability layer: the GPU runtime API under gpu* names (see HIP.md).
#pragma once

// Host code of the GPU backend (backend/gpu/, train/device/) spells the runtime API gpu*, never
// cuda* or hip*, so that one source builds the CUDA backend (nvcc, or the C++ compiler with the CUDA runtime) and
// the HIP backend (hipcc). The platform is the one tprimat/kernels/platform.hpp chose for this
// TU. Only the names the backend uses are mapped; add one here before using it.
#include "tprimat/kernels/gpu_types.hpp"

#if TPRIMAT_GPU_HIP
#define TPRIMAT_GPU_API(name) hip##name
#else
#define TPRIMAT_GPU_API(name) cuda##name
#endif

// Types and constants.
#define gpuError_t TPRIMAT_GPU_API(Error_t)
#define gpuSuccess TPRIMAT_GPU_API(Success)
#define gpuErrorMemoryAllocation TPRIMAT_GPU_API(ErrorMemoryAllocation)
#define gpuStream_t TPRIMAT_GPU_API(Stream_t)
#define gpuStreamNonBlocking TPRIMAT_GPU_API(StreamNonBlocking)
#define gpuStreamCaptureModeThreadLocal TPRIMAT_GPU_API(StreamCaptureModeThreadLocal)
#define gpuStreamCaptureStatus TPRIMAT_GPU_API(StreamCaptureStatus)
#define gpuStreamCaptureStatusNone TPRIMAT_GPU_API(StreamCaptureStatusNone)
#define gpuEvent_t TPRIMAT_GPU_API(Event_t)
#define gpuEventDisableTiming TPRIMAT_GPU_API(EventDisableTiming)
#define gpuGraph_t TPRIMAT_GPU_API(Graph_t)
#define gpuGraphExec_t TPRIMAT_GPU_API(GraphExec_t)
#define gpuMemPool_t TPRIMAT_GPU_API(MemPool_t)
#define gpuMemPoolAttr TPRIMAT_GPU_API(MemPoolAttr)
#define gpuMemPoolAttrReleaseThreshold TPRIMAT_GPU_API(MemPoolAttrReleaseThreshold)
#define gpuMemPoolAttrReservedMemHigh TPRIMAT_GPU_API(MemPoolAttrReservedMemHigh)
#define gpuMemPoolAttrUsedMemHigh TPRIMAT_GPU_API(MemPoolAttrUsedMemHigh)
#define gpuMemcpyKind TPRIMAT_GPU_API(MemcpyKind)
#define gpuMemcpyHostToDevice TPRIMAT_GPU_API(MemcpyHostToDevice)
#define gpuMemcpyDeviceToHost TPRIMAT_GPU_API(MemcpyDeviceToHost)
#define gpuMemcpyDeviceToDevice TPRIMAT_GPU_API(MemcpyDeviceToDevice)

// Errors and devices.
#define gpuGetLastError TPRIMAT_GPU_API(GetLastError)
#define gpuGetErrorString TPRIMAT_GPU_API(GetErrorString)
#define gpuGetDevice TPRIMAT_GPU_API(GetDevice)
#define gpuGetDeviceCount TPRIMAT_GPU_API(GetDeviceCount)
#define gpuGetDeviceProperties TPRIMAT_GPU_API(GetDeviceProperties)
#define gpuSetDevice TPRIMAT_GPU_API(SetDevice)
#define gpuDeviceSynchronize TPRIMAT_GPU_API(DeviceSynchronize)
#define gpuMemGetInfo TPRIMAT_GPU_API(MemGetInfo)
#define gpuDriverGetVersion TPRIMAT_GPU_API(DriverGetVersion)
#define gpuRuntimeGetVersion TPRIMAT_GPU_API(RuntimeGetVersion)

// Streams, events, graphs.
#define gpuStreamCreateWithFlags TPRIMAT_GPU_API(StreamCreateWithFlags)
#define gpuStreamDestroy TPRIMAT_GPU_API(StreamDestroy)
#define gpuStreamSynchronize TPRIMAT_GPU_API(StreamSynchronize)
#define gpuStreamWaitEvent TPRIMAT_GPU_API(StreamWaitEvent)
#define gpuStreamBeginCapture TPRIMAT_GPU_API(StreamBeginCapture)
#define gpuStreamEndCapture TPRIMAT_GPU_API(StreamEndCapture)
#define gpuStreamIsCapturing TPRIMAT_GPU_API(StreamIsCapturing)
#define gpuEventCreate TPRIMAT_GPU_API(EventCreate)
#define gpuEventCreateWithFlags TPRIMAT_GPU_API(EventCreateWithFlags)
#define gpuEventDestroy TPRIMAT_GPU_API(EventDestroy)
#define gpuEventRecord TPRIMAT_GPU_API(EventRecord)
#define gpuEventSynchronize TPRIMAT_GPU_API(EventSynchronize)
#define gpuEventElapsedTime TPRIMAT_GPU_API(EventElapsedTime)
#define gpuGraphInstantiateWithFlags TPRIMAT_GPU_API(GraphInstantiateWithFlags)
#define gpuGraphLaunch TPRIMAT_GPU_API(GraphLaunch)
#define gpuGraphDestroy TPRIMAT_GPU_API(GraphDestroy)
#define gpuGraphExecDestroy TPRIMAT_GPU_API(GraphExecDestroy)

// Memory: copies, the stream-ordered pool, page-locked host memory (HIP renamed the latter).
#define gpuMalloc TPRIMAT_GPU_API(Malloc)
#define gpuFree TPRIMAT_GPU_API(Free)
#define gpuMemcpyAsync TPRIMAT_GPU_API(MemcpyAsync)
#define gpuMemsetAsync TPRIMAT_GPU_API(MemsetAsync)
#define gpuDeviceGetDefaultMemPool TPRIMAT_GPU_API(DeviceGetDefaultMemPool)
#define gpuMemPoolSetAttribute TPRIMAT_GPU_API(MemPoolSetAttribute)
#define gpuMemPoolGetAttribute TPRIMAT_GPU_API(MemPoolGetAttribute)
#define gpuMallocFromPoolAsync TPRIMAT_GPU_API(MallocFromPoolAsync)
#define gpuFreeAsync TPRIMAT_GPU_API(FreeAsync)
#if TPRIMAT_GPU_HIP
#define gpuMallocHost(ptr, bytes) hipHostMalloc(ptr, bytes, 0)
#define gpuFreeHost hipHostFree
#define gpuDeviceProp_t hipDeviceProp_t
#else
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuDeviceProp_t cudaDeviceProp
#endif
