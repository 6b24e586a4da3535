// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Umbrella header: every public header a compiler can build here; the CPU part needs nothing
// beyond Eigen and nlohmann-json, the GPU backend comes with nvcc or hipcc.
#pragma once

// This list is the one place that names the umbrella's contents. Left out on purpose:
// parallel/mpi.hpp (needs MPI: link tprimat::mpi and include it yourself) and detail/ (internal).
// The tprimat program (its flags, jobs, bench loop and console) lives in apps/tprimat, never here.

#include "tprimat/config.hpp"

#include "tprimat/core/error.hpp"
#include "tprimat/core/number_text.hpp"
#include "tprimat/core/stats.hpp"

#include "tprimat/model/all.hpp"
#include "tprimat/model/counts.hpp"

#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/launch.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/parallel/validate.hpp"

#include "tprimat/backend/concept.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/device_info.hpp"
#include "tprimat/backend/peaks.hpp"

#include "tprimat/train/config.hpp"
#include "tprimat/train/training_step.hpp"
#include "tprimat/train/cpu/transformer.hpp"

#include "tprimat/data/blend.hpp"
#include "tprimat/data/gpt_samples.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/megatron_indexed.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/data/synthetic.hpp"

#include "tprimat/bench/config_file.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/metrics.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/bench/sanity.hpp"

#include "tprimat/report/compare.hpp"
#include "tprimat/report/compare_plot.hpp"
#include "tprimat/report/compare_report.hpp"
#include "tprimat/report/csv.hpp"
#include "tprimat/report/gnuplot.hpp"
#include "tprimat/report/import_log.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/output.hpp"
#include "tprimat/report/peak.hpp"
#include "tprimat/report/peak_plot.hpp"
#include "tprimat/report/plot_labels.hpp"
#include "tprimat/report/text.hpp"

// The GPU backend where this TU's compiler can build it (nvcc: backend::Gpu, hipcc:
// backend::Gpu), with TrainingStep on it, header-only: the definitions come along unless the
// build links them compiled once (TPRIMAT_GPU_EXTERN_TEMPLATES: the in-tree binaries, src/). A
// TU of a C++ compiler sees none of it, so CPU-only code never meets a vendor header.
#if defined(__CUDACC__) || defined(__HIPCC__)
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#if defined(TPRIMAT_HAVE_NCCL)
#include "tprimat/backend/gpu/nccl.hpp"
#endif
#if !defined(TPRIMAT_GPU_EXTERN_TEMPLATES)
#include "tprimat/backend/gpu/all.cuh"
#include "tprimat/train/device/engine.hpp"
#endif
#endif
