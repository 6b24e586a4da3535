// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The tprimat command line: `tprimat bench` times training steps, `tprimat plan` predicts memory.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <span>
#include <string>
#include <type_traits>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/environment.hpp"
#if defined(TPRIMAT_WITH_CUDA) || defined(TPRIMAT_WITH_HIP)
#include "tprimat/backend/gpu.hpp"
#endif
#if defined(TPRIMAT_HAVE_NCCL)
#include "tprimat/backend/gpu/nccl.hpp"
#endif
#include "tprimat/backend/peaks.hpp"
#include "tprimat/config.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/report/gnuplot.hpp"
#include "cli/config_documents.hpp"
#include "cli/config_settings.hpp"
#include "cli/data_command.hpp"
#include "cli/dispatch.hpp"
#include "cli/driver.hpp"
#include "cli/given_values.hpp"
#include "cli/interrupt.hpp"
#include "cli/number_option.hpp"
#include "cli/options.hpp"
#include "cli/parse_errors.hpp"
#include "cli/profile_command.hpp"
#include "cli/report_commands.hpp"
#include "cli/session.hpp"

namespace {

using namespace tprimat;

/// Registers the shared flag table on a CLI11 subcommand; env-backed flags read their variable,
/// numbers are read by core::parse_number within their range.
struct AddOption {
  CLI::App* app;
  template <class T, class... R>
  void operator()(std::string_view flag, T& field, std::string_view help, std::string_view env,
                  const R&... range) {
    CLI::Option* opt = nullptr;
    if constexpr (std::is_same_v<T, bool>)
      opt = app->add_flag(std::string(flag), field, std::string(help));
    else if constexpr (sizeof...(R) == 1)
      opt = cli::add_number(app, std::string(flag), field, std::string(help), range...);
    else
      opt = app->add_option(std::string(flag), field, std::string(help));
    if (!env.empty()) opt->envname(std::string(env));
    if (flag == "--data")  // a blend: --data 0.7 A 0.3 B (joined by newlines)
      opt->expected(1, -1)->allow_extra_args()->multi_option_policy(CLI::MultiOptionPolicy::Join);
  }
};

/// `--parallel DIR`: a directory where a strategy name or a config file belongs. Said here, before
/// any reader opens it, naming the config files the directory holds.
void check_parallel_is_no_directory(const std::string& parallel) {
  std::error_code ec;
  if (parallel.empty() || !std::filesystem::is_directory(parallel, ec)) return;
  std::string configs;
  int listed = 0;
  for (const auto& e : std::filesystem::directory_iterator(parallel, ec)) {
    if (!bench::config_format(e.path().filename().string()) || listed == 3) continue;
    configs += (listed++ ? ", " : "") + e.path().string();
  }
  throw core::InputError("--parallel " + parallel + " is a directory, not a config file",
                         "pass a config .json or .yaml file" +
                             (configs.empty() ? std::string() : " (there: " + configs + ")") +
                             ", a strategy name, or all");
}

/// A --parallel config file's run settings (its training and benchmarking keys) into `o` where
/// `cmd`'s flags did not set them (the notice of keys not applied comes with the jobs).
void apply_config_file_settings(cli::BenchOptions& o, const CLI::App& cmd) {
  if (!cli::detail::names_config_file(o.parallel)) return;
  const bench::ConfigRun run = bench::load_config_run(cli::config_document(o.parallel));
  cli::apply_config_run(o, run, [&](std::string_view flag) {
    const CLI::Option* opt = cmd.get_option_no_throw(std::string(flag));
    return opt != nullptr && opt->count() > 0;
  });
}

/// The backend `--backend` asks for, or with auto the GPU one when this binary has it and a GPU
/// is present. Returns its name ("cpu", "cuda", "hip"). A build has one GPU backend.
std::string pick_backend(const std::string& asked) {
#if defined(TPRIMAT_WITH_CUDA)
  const bool gpu = backend::Gpu::device_count() > 0;
  if (asked == "cuda" && !gpu)
    throw core::InputError("--backend cuda: no CUDA device is visible (driver or GPU missing)",
                           "run on a GPU machine, or --backend cpu");
  if (asked == "cuda" || (asked == "auto" && gpu)) return "cuda";
  if (asked == "hip")
    throw core::InputError("this tprimat is built with the CUDA backend, not HIP",
                           "build for ROCm (docs/rocm.md), or use --backend cuda or cpu");
#elif defined(TPRIMAT_WITH_HIP)
  const bool gpu = backend::Gpu::device_count() > 0;
  if (asked == "hip" && !gpu)
    throw core::InputError("--backend hip: no AMD GPU is visible (ROCm runtime or GPU missing)",
                           "run on a ROCm machine, or --backend cpu");
  if (asked == "hip" || (asked == "auto" && gpu)) return "hip";
  if (asked == "cuda")
    throw core::InputError("this tprimat is built with the HIP backend, not CUDA",
                           "build with the CUDA toolkit on PATH, or use --backend hip or cpu");
#else
  if (asked == "cuda" || asked == "hip")
    throw core::InputError("this tprimat is built without a GPU backend (neither nvcc nor hipcc "
                           "at build time)",
                           "rebuild with the CUDA toolkit or ROCm on PATH, or --backend cpu");
#endif
  return "cpu";
}

backend::DeviceInfo device_for(const std::string& stack, double peak_override) {
  backend::DeviceInfo info;
#if defined(TPRIMAT_WITH_CUDA)
  if (stack == "cuda") info = backend::Gpu::device_info();
#elif defined(TPRIMAT_WITH_HIP)
  if (stack == "hip") info = backend::Gpu::device_info();
#endif
#if defined(TPRIMAT_HAVE_NCCL)
  if (stack == "cuda" || stack == "hip") info.collectives_version = parallel::comm::Nccl::version();
#endif
  if (stack == "cpu") info = backend::Cpu::device_info();
  if (peak_override > 0) info.peak_tflops_dense = peak_override;
  return info;
}

/// `tprimat plan --device NAME [--device-memory GIB]`: a GPU that is not on this machine (bf16
/// compute, fp32 optimizer state, as the GPU backends run); its memory from the table of
/// measured devices (backend::known_memory) when --device-memory is not given.
backend::DeviceInfo planned_device(const std::string& name, double memory_gib,
                                   double peak_override) {
  if (memory_gib <= 0) memory_gib = backend::known_memory_gib(name);
  if (memory_gib <= 0) {
    std::string known;
    for (const auto& m : backend::known_memory)
      known += (known.empty() ? "" : ", ") + std::string(m.name);
    throw core::InputError("--device " + name + " needs --device-memory: the GiB of one such GPU "
                               "(tprimat knows the memory of " + known + " only)",
                           "pass --device-memory with the GiB one such GPU reports (nvidia-smi "
                           "--query-gpu=memory.total, rocm-smi --showmeminfo vram)");
  }
  backend::DeviceInfo info;
  char unnamed[64];
  std::snprintf(unnamed, sizeof unnamed, "a GPU of %.1f GiB", memory_gib);
  info.device_name = name.empty() ? unnamed : name;
  const bool amd = name.find("AMD") != std::string::npos ||
                   name.find("Instinct") != std::string::npos || name.rfind("MI", 0) == 0;
  info.platform = amd ? "amd" : "nvd";
  info.software_stack = amd ? "rocm" : "cuda";
  info.total_memory_gb = memory_gib;
  info.peak_tflops_dense =
      peak_override > 0 ? peak_override : backend::dense_peak_tflops(info.device_name);
  info.peak_tflops_fp8_dense = backend::dense_fp8_peak_tflops(info.device_name);
  return info;
}

/// The benchmark over `comm`: comm::Single, comm::Mpi (CPU ranks) or comm::WithNccl<comm::Mpi>
/// (GPU ranks, one GPU each, NCCL or RCCL). Only the pairs that can run are compiled: never the CPU
/// backend over NCCL, nor a GPU backend over plain MPI (its host-staged collectives are for tests).
template <class Comm>
int bench_over(const std::string& stack, Comm comm, int argc, char** argv,
               const cli::BenchOptions& opts) {
  constexpr bool single = std::is_same_v<Comm, parallel::comm::Single>;
  constexpr bool nccl = requires(const Comm& c) { c.nccl(); };
  cli::Runtime rt;
  rt.env.device = device_for(stack, opts.peak_tflops);
  rt.env.world = comm.size();
  rt.env.nodes = parallel::detect_launch().nodes;
  rt.env.collective_settings = parallel::collective_settings();
  rt.env.command_line = bench::command_line(argc, argv);
  rt.env.compiled = cli::layout_dispatched;
  rt.rank = comm.rank();
  rt.max_over_ranks = cli::max_over_ranks(comm);
#ifdef TPRIMAT_SOURCE_DIR
  rt.git_dir = TPRIMAT_SOURCE_DIR;
#endif
  // --parallel all ends with `tprimat compare` over the strategies' results, as the seeds'
  // compare_all_configs.sh follows run_all_configs.sh.
  rt.compare = [](const std::vector<std::filesystem::path>& dirs,
                  const std::filesystem::path& report_dir) {
    cli::CompareOptions c;
    std::string command = "tprimat compare";
    for (const auto& d : dirs) {
      c.dirs.push_back(d.string());
      command += " --results-dir " + d.string();
    }
    c.output_dir = report_dir.string();
    std::printf("tprimat: comparing the strategies that wrote a result: %s --output-dir %s\n",
                command.c_str(), c.output_dir.c_str());
    std::fflush(stdout);
    (void)cli::run_compare(c);
  };
  rt.run_once = [comm, stack](const cli::Job& job, int run,
                              cli::Reporter& rep) -> bench::RunRecord {
#if defined(TPRIMAT_WITH_CUDA)
    if constexpr (single || nccl)
      if (stack == "cuda") return cli::run_dispatched<backend::Gpu>(job, run, comm, rep);
#elif defined(TPRIMAT_WITH_HIP)
    if (stack == "hip") {
      if constexpr (single || nccl) return cli::run_dispatched<backend::Gpu>(job, run, comm, rep);
      throw core::InputError("several ranks on the HIP backend need RCCL, and this tprimat was "
                             "built without it (a parallel layout on --backend hip stops here)",
                             "install RCCL (ROCm's librccl-dev) and rebuild, or run one process "
                             "per AMD GPU job, or --backend cpu");
    }
#endif
    if constexpr (!nccl) {
      if (stack != "cpu")
        throw core::InputError("several ranks on the " + stack +
                                   " backend need NCCL, and this tprimat is built without it",
                               "install NCCL (libnccl-dev) and rebuild, or --backend cpu");
      return cli::run_dispatched<backend::Cpu>(job, run, comm, rep);
    } else {
      throw core::InputError("NCCL (RCCL on AMD) runs with the GPU backend only",
                             "use --backend cuda (or hip on AMD)");
    }
  };
  return cli::run_bench(opts, rt);
}

/// `tprimat bench` with the options `cmd` parsed into `opts`, completed by a --parallel config
/// file's settings (which rank 0 reads for every rank: cli::share_config_document).
int bench_main(int argc, char** argv, cli::BenchOptions opts, const CLI::App& cmd) {
  return cli::with_communicator(&argc, &argv, [&](auto comm) {
    check_parallel_is_no_directory(opts.parallel);
    if constexpr (requires { comm.broadcast_bytes(std::span<std::byte>{}, 0); })
      if (cli::detail::names_config_file(opts.parallel))
        cli::share_config_document(comm, opts.parallel);
    apply_config_file_settings(opts, cmd);
    const std::string stack = pick_backend(opts.backend);
#if (defined(TPRIMAT_WITH_CUDA) || defined(TPRIMAT_WITH_HIP)) && defined(TPRIMAT_HAVE_NCCL)
    // Ranks of the GPU backend: one GPU each (the node-local rank's), NCCL (RCCL on AMD) between
    // them.
    if constexpr (!std::is_same_v<decltype(comm), parallel::comm::Single>) {
      if (stack == backend::Gpu::name) {
        // Every rank must have its GPU before NCCL starts, or the others would wait in its
        // set-up forever: the ranks agree first, and all stop with the reason.
        std::string missing;
        try {
          backend::Gpu::use_device(parallel::detect_launch().local_rank);
        } catch (const core::InputError& e) {
          missing = e.what();
        }
        float failed = missing.empty() ? 0.0f : 1.0f;
        comm.all_reduce_max(std::span<float>(&failed, 1));
        if (failed > 0)
          throw core::InputError(missing.empty() ? "another rank of this job has no GPU of its own"
                                                 : missing);
        return bench_over(stack, parallel::comm::WithNccl<decltype(comm)>(comm), argc, argv,
                          opts);
      }
    }
#endif
    return bench_over(stack, comm, argc, argv, opts);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // A run reads its inputs, then writes: no output may replace an input (core/output_file.hpp).
  core::guard_input_files();
  // A gnuplot still drawing when a bench is interrupted (--parallel all's closing comparison)
  // is stopped, not waited for.
  report::interrupt_flag = &cli::detail::interrupt_signal_seen;
  CLI::App app{"tprimat: times real LLM training steps (forward, backward, AdamW) and writes "
               "comparable JSON results"};
  app.set_version_flag("--version", std::string("tprimat ") + tprimat::version_string);
  app.require_subcommand(1);

  cli::BenchOptions bench_opts;
  auto* bench_cmd = app.add_subcommand("bench", "run the training-step benchmark");
  cli::for_each_selection_flag(bench_opts, AddOption{bench_cmd});
  cli::for_each_run_flag(bench_opts, AddOption{bench_cmd});

  cli::BenchOptions plan_opts;
  auto* plan_cmd = app.add_subcommand("plan", "print the predicted memory per GPU, run nothing");
  cli::for_each_selection_flag(plan_opts, AddOption{plan_cmd});
  // Each by its first name; its aliases (Megatron's) come with it.
  for (auto* f : {"--mbs",
                  "--gbs",
                  "--gradient-accumulation-steps",
                  "--seq",
                  "--layers",
                  "--backend",
                  "--peak-tflops",
                  "--distributed-optimizer",
                  "--data-parallel-sharding-strategy",
                  "--num-distributed-optimizer-instances",
                  "--sequence-parallel",
                  "--recompute-granularity",
                  "--recompute-method",
                  "--recompute-num-layers",
                  "--recompute-modules",
                  "--precision",
                  "--fp8-format",
                  "--fp8-recipe",
                  "--fp8-bf16-layers-at-start",
                  "--fp8-bf16-layers-at-end"}) {
    cli::for_each_run_flag(plan_opts,
                             [&](std::string_view flag, auto& field, std::string_view help,
                                 std::string_view env, const auto&... range) {
                               if (cli::detail::flag_names(flag)[0] == f)
                                 AddOption{plan_cmd}(flag, field, help, env, range...);
                             });
  }
  cli::add_number(plan_cmd, "--num-gpus", plan_opts.num_gpus,
                  "ranks to plan for (default: TP x PP of the strategy, i.e. DP 1)",
                  cli::limits::gpus_range);
  std::string plan_device;
  double plan_device_memory = 0;
  plan_cmd->add_option("--device", plan_device,
                       "plan for this GPU instead of the one here, e.g. \"NVIDIA H200\" or H100 "
                       "(its dense peak and, for H100 and H200, its memory from the built-in "
                       "tables; other GPUs need --device-memory)");
  cli::add_number(plan_cmd, "--device-memory", plan_device_memory,
                  "GiB of memory per GPU to plan for (e.g. 139.8 for an H200)",
                  cli::limits::device_memory_range);

  cli::ReportCommands report_cmds;
  cli::add_report_commands(app, report_cmds, argc, argv);
  cli::DataCommand data_cmd;
  cli::add_data_command(app, data_cmd);
  cli::ProfileCommand profile_cmd;
  cli::add_profile_command(app, profile_cmd);

  cli::require_number_rules(app);

  try {
    app.parse(argc, argv);
    cli::check_given_values(app);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, the same shape as every other bad-input message, and exit code 2.
    if (const auto line = cli::retell_parse_error(app, e)) {
      std::fprintf(stderr, "tprimat: %s\n", line->c_str());
    } else {
      std::fprintf(stderr, "tprimat: %s; run %s --help for the options\n", e.what(),
                   cli::detail::command_of(cli::detail::reached(app)).c_str());
    }
    return core::exit_bad_input;
  } catch (const core::InputError& e) {  // a number refused by cli::number()
    std::fprintf(stderr, "%s\n", e.what());
    return core::exit_bad_input;
  }

  try {
    // Settings read from the environment, read now: an unreadable one is refused before anything
    // runs, not at the first GEMM or plot.
    backend::check_environment();
    (void)report::gnuplot_time_limit_seconds();
    if (auto rc = cli::run_report_command(report_cmds)) return *rc;
    if (auto rc = cli::run_data_command(data_cmd)) return *rc;
    if (auto rc = cli::run_profile_command(profile_cmd)) return *rc;
    if (*plan_cmd) {
      check_parallel_is_no_directory(plan_opts.parallel);
      apply_config_file_settings(plan_opts, *plan_cmd);
      cli::Environment env;
      if (!plan_device.empty() || plan_device_memory > 0)
        env.device = planned_device(plan_device, plan_device_memory, plan_opts.peak_tflops);
      else
        env.device = device_for(pick_backend(plan_opts.backend), plan_opts.peak_tflops);
      env.compiled = cli::layout_dispatched;
      return cli::run_plan(plan_opts, env);
    }
    return bench_main(argc, argv, bench_opts, *bench_cmd);
  } catch (const core::InputError& e) {
    return cli::report_input_error(e, 0);
  } catch (const std::bad_alloc&) {  // a memory limit (ulimit -v, a cgroup) under what it needs
    std::fprintf(stderr,
                 "tprimat: out of host memory (the process's memory limit, or the machine's); "
                 "raise the limit (ulimit -v), or give a smaller input\n");
    return core::exit_run_failed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return core::exit_run_failed;
  }
}
