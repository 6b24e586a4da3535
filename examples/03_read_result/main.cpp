// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Example 03: reading results. Every result file tprimat writes (and each log `tprimat import`
// turns into one) loads into one report::Result: throughput, MFU against the dense peak, the
// configuration that defines the experiment, and the warnings of figures no run can reach.
//   build/examples/03_read_result/tprimat_example_03_read_result RESULT.json...
#include <tprimat/tprimat.hpp>

#include <cstdio>
#include <exception>

namespace tp = tprimat;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RESULT.json...  (results of tprimat bench or import)\n",
                 argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    try {
      const tp::report::Result r = tp::report::load_file(argv[i]);
      std::printf("%s: %s on %d x %s, TP=%d PP=%d DP=%d, gbs %d seq %d, %s\n", r.file.c_str(),
                  r.model.c_str(), r.num_gpus, r.device_name.c_str(), r.tp, r.pp, r.dp, r.gbs,
                  r.seq, r.precision.empty() ? "precision not recorded" : r.precision.c_str());
      std::printf("  %s tokens/s/GPU, %s TFLOP/s/GPU, MFU %s\n",
                  tp::core::grouped(r.tokens_per_second_per_gpu).c_str(),
                  tp::core::num(r.tflops_per_gpu(), 1).c_str(),
                  tp::core::percent(r.mfu()).c_str());
      for (const auto& w : r.warnings()) std::printf("  warning: %s\n", w.c_str());
    } catch (const std::exception& e) {  // not a result, unreadable, too big: said, not crashed
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }
  return 0;
}
