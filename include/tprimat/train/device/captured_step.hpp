// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// CapturedStep: a step's work issued eagerly once, then captured as one CUDA/HIP graph and
// replayed; its GPU time from events around it.
#pragma once

#include "tprimat/backend/gpu.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

class CapturedStep {
 public:
  explicit CapturedStep(bool graph) : graph_wanted_(graph) {}
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;
  ~CapturedStep() { release(); }

  void create() {
    start_ = OwnedEvent(EventUse::timing);
    stop_ = OwnedEvent(EventUse::timing);
  }
  /// Destroys the graph (before the events and buffers its nodes name).
  void release() {
    if (graph_) (void)gpuGraphExecDestroy(graph_);
    graph_ = nullptr;
  }
  bool captured() const { return graph_ != nullptr; }

  /// The step's time starts here (its uploads included).
  void begin(gpuStream_t stream) {
    backend::gpu_check(gpuEventRecord(start_, stream), "gpuEventRecord");
  }

  /// Issues the step's work: the graph's replay; else, after one eager step, its capture and
  /// first replay (cuBLASLt's algorithms and cuDNN's plans are chosen and every kernel is loaded
  /// by then, so capture sees only launches on fixed buffers); else `enqueue()` eagerly, with
  /// phase timing when asked (a replay runs no host code, so nothing to mark).
  template <class Enqueue>
  void issue(gpuStream_t stream, PhaseTimer& timer, bool phase_timing, Enqueue&& enqueue) {
    if (graph_) {
      // A replay runs no host code: its kernels fall under this range, not forward/backward.
      const profile::Range range("graph launch");
      backend::gpu_check(gpuGraphLaunch(graph_, stream), "gpuGraphLaunch");
    } else if (graph_wanted_ && eager_steps_ >= 1) {
      const profile::Range range("graph capture");
      gpuGraph_t captured = nullptr;
      backend::gpu_check(gpuStreamBeginCapture(stream, gpuStreamCaptureModeThreadLocal),
                         "gpuStreamBeginCapture");
      try {
        enqueue();
      } catch (...) {
        (void)gpuStreamEndCapture(stream, &captured);
        if (captured) (void)gpuGraphDestroy(captured);
        throw;
      }
      backend::gpu_check(gpuStreamEndCapture(stream, &captured), "gpuStreamEndCapture");
      const gpuError_t inst = gpuGraphInstantiateWithFlags(&graph_, captured, 0);
      (void)gpuGraphDestroy(captured);
      backend::gpu_check(inst, "gpuGraphInstantiate");
      backend::gpu_check(gpuGraphLaunch(graph_, stream), "gpuGraphLaunch");
    } else {
      timer.begin(phase_timing);
      enqueue();
      timer.end();
      ++eager_steps_;
    }
  }

  /// The step's time ends here; `finish` waits for it and returns its GPU seconds.
  void end(gpuStream_t stream) {
    backend::gpu_check(gpuEventRecord(stop_, stream), "gpuEventRecord");
  }
  double finish() {
    backend::gpu_check(gpuEventSynchronize(stop_), "training step");
    float ms = 0;
    backend::gpu_check(gpuEventElapsedTime(&ms, start_, stop_), "gpuEventElapsedTime");
    return ms * 1e-3;
  }

  /// No capture: collectives that wait on the host (host-staged) cannot be captured.
  void disable_graph() { graph_wanted_ = false; }

 private:
  bool graph_wanted_ = true;
  int eager_steps_ = 0;
  OwnedEvent start_, stop_;
  gpuGraphExec_t graph_ = nullptr;
};

}  // namespace tprimat::train::device
