// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat compare`, `tprimat peak` and `tprimat import`: the reports people read, on CLI11.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/number_option.hpp"
#include "cli/options.hpp"
#include "cli/output_lock.hpp"
#include "cli/result_fixes.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/output_file.hpp"
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

namespace tprimat::cli {

struct CompareOptions {
  std::vector<std::string> dirs;
  std::vector<std::string> files;
  std::string output_dir = "output";
  bool csv = false;  ///< also write compare.csv
};

struct PeakCommandOptions {
  std::vector<std::string> paths;
  std::string output_dir = "output";
  bool csv = false;  ///< also write peak.csv
  report::PeakOptions peak;
};

/// The import's options as this program names them: its messages and the result's
/// configuration_sources say "--num-gpus", not the library's "num_gpus".
inline report::ImportOptionNames import_flag_names() {
  return {.model = "--model", .num_gpus = "--num-gpus", .gbs = "--global-batch-size",
          .mbs = "--micro-batch-size", .seq = "--sequence-length", .tp = "--tp", .pp = "--pp",
          .cp = "--cp", .warmup_steps = "--warmup-steps", .strategy = "--strategy",
          .seed = "--seed", .data = "--data"};
}

struct ImportCommandOptions {
  std::vector<std::string> logs;
  std::string output_dir = "output";
  bool overwrite = false;  ///< replace a result of another configuration instead of refusing
  report::ImportOptions imp{.names = import_flag_names()};
};

struct ReportCommands {
  CLI::App* compare = nullptr;
  CompareOptions compare_opts;
  CLI::App* peak = nullptr;
  PeakCommandOptions peak_opts;
  CLI::App* import = nullptr;
  ImportCommandOptions import_opts;
  std::string command_line;  ///< for the imported results' `reproduce`
};

/// Registers the subcommands; `cmds` must outlive parsing (CLI11 keeps pointers to its fields).
inline void add_report_commands(CLI::App& app, ReportCommands& cmds, int argc, char** argv) {
  cmds.command_line = bench::command_line(argc, argv);
  auto& c = cmds.compare_opts;
  cmds.compare = app.add_subcommand(
      "compare", "compare result JSONs (ours and the seeds'): table, comparison_report.md, plots");
  cmds.compare
      ->add_option("--results-dir", c.dirs,
                   "directory searched recursively for benchmark_*.json and train_*.json "
                   "(repeatable)")
      ->allow_extra_args(false);
  cmds.compare->add_option("paths", c.files,
                           "result files, or directories searched as --results-dir is");
  cmds.compare->add_option("--output-dir", c.output_dir, "where reports and plots go")
      ->capture_default_str();
  cmds.compare->add_flag("--csv", c.csv,
                         "also write compare.csv: one row per result, every configuration field "
                         "and figure (docs/reports.md)");

  auto& p = cmds.peak_opts;
  cmds.peak = app.add_subcommand(
      "peak", "peak throughput per platform x model, MFU against dense peaks, projections");
  cmds.peak->add_option("paths", p.paths,
                        "directories searched for benchmark_*.json and train_*.json, or result "
                        "files (default: the current directory)");
  cmds.peak->add_flag("--show-all", p.peak.show_all, "list every result, not only the peaks");
  cmds.peak
      ->add_option("--peak-tflops", p.peak.peak_tflops,
                   "dense bf16 peak per device in TFLOP/s, replacing the built-in table")
      ->transform(number("--peak-tflops", cli::limits::peak_tflops_range));
  cmds.peak
      ->add_option("--scaling-efficiency", p.peak.scaling_efficiency,
                   "multi-node scaling efficiency in (0, 1] (default: measured where "
                   "results at several GPU counts exist, else 0.90)")
      ->transform(number("--scaling-efficiency", core::between(0.01, 1.0)));
  cmds.peak->add_option("--output-dir", p.output_dir, "where reports and plots go")
      ->capture_default_str();
  cmds.peak->add_flag("--csv", p.csv,
                      "also write peak.csv: one row per result, every configuration field and "
                      "figure, and which is its platform x model's peak (docs/reports.md)");

  auto& i = cmds.import_opts;
  cmds.import = app.add_subcommand(
      "import", "turn Megatron/Primus/NeMo/torchtitan training logs into result JSONs");
  cmds.import->add_option("--format", i.imp.format, "megatron, primus, nemo or torchtitan")
      ->required();
  cmds.import
      ->add_option("logs", i.logs, "training logs; a directory stands for the *.log files in it")
      ->required();
  cmds.import->add_option("--model", i.imp.model, "llama, qwen, mistral or tiny (for the FLOPs)")
      ->required();
  // The log's own configuration wins; these fill only what it does not state, and one that
  // contradicts it is refused. Their ranges are the ones a log's own figures are read within.
  const auto gpus = core::between(1, int(report::max_gpu_count));
  const auto counts = core::between(1, int(report::max_batch_or_sequence));
  const struct {
    const char* flag;
    std::optional<int>& field;
    const char* help;
    core::Range<int> range;
  } settings[] = {
      {"--num-gpus", i.imp.num_gpus, "GPUs of the run, where the log does not state them", gpus},
      {"--global-batch-size,--gbs", i.imp.gbs, "global batch, where the log does not state it",
       counts},
      {"--sequence-length,--seq-length,--seq", i.imp.seq,
       "sequence length, where the log does not state it", counts},
      {"--micro-batch-size,--mbs", i.imp.mbs,
       "micro batch, where the log does not state it (else 1)", counts},
      {"--tp,--tensor-model-parallel-size", i.imp.tp,
       "tensor parallel size, where the log does not state it (else 1)", gpus},
      {"--pp,--pipeline-model-parallel-size", i.imp.pp,
       "pipeline parallel size, where the log does not state it (else 1)", gpus},
      {"--cp,--context-parallel-size", i.imp.cp,
       "context parallel size, where the log does not state it (else 1)", gpus}};
  for (const auto& setting : settings)
    add_number(cmds.import, setting.flag, setting.field, setting.help, setting.range);
  add_number(cmds.import, "--warmup-steps", i.imp.warmup_steps,
             "leading iterations left out of the statistics", core::at_least(0))
      ->capture_default_str();
  cmds.import->add_option("--platform", i.imp.platform,
                          "nvd, amd or cpu (default: amd for primus, else nvd)")
      ->check(CLI::IsMember({"nvd", "amd", "cpu"}));
  cmds.import->add_option("--device-name", i.imp.device_name,
                          "device, e.g. 'NVIDIA H100 80GB HBM3' (picks the dense peak for MFU)")
      ->capture_default_str();
  cmds.import->add_option("--strategy", i.imp.strategy, "strategy name to record")
      ->capture_default_str();
  cmds.import->add_option("--data", i.imp.data,
                          "the data the run read, as you name it (training_config.data; wins "
                          "over the path the log prints): two logs of one data set name it alike "
                          "so that compare sets them side by side");
  add_number(cmds.import, "--seed", i.imp.seed, "the run's seed, where the log does not print it",
             core::at_least(0LL));
  cmds.import->add_option("--output-dir", i.output_dir, "where the result JSONs go")
      ->capture_default_str();
  cmds.import->add_flag("--overwrite", i.overwrite,
                        "replace a result in --output-dir even if it is of another configuration "
                        "(default: refuse)");
}

namespace detail {

/// Positional paths: a directory is searched as --results-dir is, anything else is a file.
inline void split_paths(const std::vector<std::string>& paths, std::vector<std::string>& dirs,
                        std::vector<std::string>& files) {
  for (const auto& p : paths) {
    std::error_code ec;
    (std::filesystem::is_directory(p, ec) ? dirs : files).push_back(p);
  }
}

/// Bad inputs go to stderr, one line each; with nothing usable the whole command is bad input.
inline report::LoadOutcome load_or_throw(const std::vector<std::string>& dirs,
                                         const std::vector<std::string>& files,
                                         const char* command) {
  if (dirs.empty() && files.empty())
    throw core::InputError(std::string("nothing to ") + command,
                           "pass result files or --results-dir DIR");
  auto in = report::load_inputs(dirs, files);
  if (in.results.empty()) {
    std::string why;
    for (const auto& p : in.problems) why += (why.empty() ? "" : "; ") + report::without_prefix(p);
    throw core::InputError(std::string("no usable result to ") + command + ": " +
                           report::printable(why));
  }
  // One line each, whatever newline or escape a file's name holds.
  for (const auto& p : in.problems) std::fprintf(stderr, "%s\n", report::printable(p).c_str());
  return in;
}

/// Refuses, before anything is read or written, an output name where a link, FIFO, directory or
/// input sits: a report is written whole or not at all (exit 2), never half of it and then exit 1.
inline void check_report_outputs(const std::string& dir,
                                 std::initializer_list<std::string_view> names) {
  for (const auto name : names)
    core::check_output_path(std::filesystem::path(dir) / name,
                            "remove it, or pass another --output-dir");
}

}  // namespace detail

inline int run_compare(const CompareOptions& o) {
  report::prepare_output_dir(o.output_dir);
  detail::check_report_outputs(o.output_dir, {"comparison_report.md", "compare.gp",
                                              "compare_bars.dat", "compare_labels.dat"});
  if (o.csv) detail::check_report_outputs(o.output_dir, {"compare.csv"});
  std::vector<std::string> dirs = o.dirs, files;
  detail::split_paths(o.files, dirs, files);
  const auto in = detail::load_or_throw(dirs, files, "compare");
  const auto groups = report::group_results(in.results);
  const auto comparisons = report::compare_groups(groups);
  std::fputs(report::compare_text(in, groups, comparisons).c_str(), stdout);
  const auto md = report::write_report_file(o.output_dir, "comparison_report.md",
                                            report::comparison_report(in, groups, comparisons));
  std::printf("wrote %s\n", md.c_str());
  if (o.csv) {
    std::vector<const report::Result*> rows;
    for (const auto& r : in.results) rows.push_back(&r);
    const auto csv =
        report::write_report_file(o.output_dir, "compare.csv", report::results_csv(rows));
    std::printf("wrote %s\n", csv.c_str());
  }
  const auto script = report::write_compare_plot(o.output_dir, groups);
  for (const auto& line : report::draw(o.output_dir, script, "compare"))
    std::printf("%s\n", line.c_str());
  return 0;
}

inline int run_peak(const PeakCommandOptions& o) {
  report::prepare_output_dir(o.output_dir);
  detail::check_report_outputs(
      o.output_dir, {"peak_throughput_analysis.txt", "peak.gp", "peak_bars.dat", "peak_steps.dat",
                     "peak_labels.dat"});
  if (o.csv) detail::check_report_outputs(o.output_dir, {"peak.csv"});
  std::vector<std::string> dirs, files;
  detail::split_paths(o.paths.empty() ? std::vector<std::string>{"."} : o.paths, dirs, files);
  auto in = detail::load_or_throw(dirs, files, "analyse");
  if (o.peak.peak_tflops > 0)
    for (auto& r : in.results) r.peak_tflops_dense = o.peak.peak_tflops;
  const auto text = report::peak_text(in, in.results, o.peak);
  std::fputs(text.c_str(), stdout);
  const auto path = report::write_report_file(o.output_dir, "peak_throughput_analysis.txt", text);
  std::printf("wrote %s\n", path.c_str());
  if (o.csv) {
    const auto csv =
        report::write_report_file(o.output_dir, "peak.csv", report::peak_csv(in.results));
    std::printf("wrote %s\n", csv.c_str());
  }
  const auto script = report::write_peak_plot(o.output_dir, in.results);
  for (const auto& line : report::draw(o.output_dir, script, "peak_throughput_analysis"))
    std::printf("%s\n", line.c_str());
  return 0;
}

namespace detail {

/// The logs named on the command line; a directory stands for the *.log files in it (not
/// below), and one without any is named in `problems`.
inline std::vector<std::string> import_inputs(const std::vector<std::string>& args,
                                              std::vector<std::string>& problems) {
  std::vector<std::string> logs;
  for (const auto& arg : args) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      logs.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(arg, ec))
      if (e.path().extension() == ".log" && e.is_regular_file(ec)) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    if (found.empty())
      problems.push_back("tprimat: " + arg +
                         " is a directory with no *.log file in it; pass the training logs, or "
                         "a directory that holds them as *.log");
    logs.insert(logs.end(), found.begin(), found.end());
  }
  return logs;
}

/// The folder a log's result goes to when several are imported: its name without ".log", never
/// one that leaves --output-dir ("...log" would give "..") or hides ("." or a leading dot).
inline std::string folder_of_log(const std::string& log) {
  std::string name = std::filesystem::path(log).filename().string();
  if (name.ends_with(".log")) name.resize(name.size() - 4);
  std::size_t dots = 0;
  while (dots < name.size() && name[dots] == '.') ++dots;
  if (dots > 0) name = "dot" + name.substr(dots);  // "..", ".", ".hidden": a plain name
  return name.empty() || name == "dot" ? "log" : name;
}

/// One imported log and where its result goes.
struct ImportedLog {
  std::string log;
  nlohmann::json doc;  ///< as bench::write_result puts it on disk (bench::as_written), once checked
  std::filesystem::path path;
  /// What the result replaces: nullopt for nothing, else the differences from the old one.
  std::optional<std::vector<std::string>> replaced;
};

}  // namespace detail

/// One result per log; a bad log is named on stderr and the others are still imported. Nothing
/// is written before every result's place is checked: two logs that would write one file, or a
/// file of another configuration without --overwrite, refuse the whole command.
inline int run_import(const ImportCommandOptions& o, const std::string& command_line) {
  // Format, model and flag problems are the same for every log: refused before any is read.
  report::check_import_options(o.imp);
  std::vector<std::string> problems;
  const auto logs = detail::import_inputs(o.logs, problems);
  std::vector<detail::ImportedLog> imported;
  for (const auto& log : logs) {
    try {
      auto doc = report::import_log(log, o.imp, command_line);
      auto dir = std::filesystem::path(o.output_dir);
      // Several logs: one directory each, so compare sees them as separate runs.
      if (logs.size() > 1) dir /= detail::folder_of_log(log);
      auto path = dir / ("benchmark_" + doc["gpu_info"]["software_stack"].get<std::string>() + "_" +
                         o.imp.model + ".json");
      imported.push_back({log, std::move(doc), std::move(path)});
    } catch (const core::InputError& e) {
      problems.push_back(e.what());
    }
  }
  if (imported.empty()) {
    std::string why;
    for (const auto& p : problems) why += (why.empty() ? "" : "; ") + report::without_prefix(p);
    throw core::InputError("nothing imported: " + why);
  }
  for (std::size_t i = 0; i < imported.size(); ++i) {
    auto& a = imported[i];
    for (std::size_t j = 0; j < i; ++j)
      if (imported[j].path == a.path)
        throw core::InputError(
            imported[j].log + " and " + a.log + " would both write " + a.path.string(),
            "import them one at a time, each with its own --output-dir");
    std::error_code ec;
    if (std::filesystem::exists(a.path, ec) && !std::filesystem::is_regular_file(a.path, ec))
      throw core::InputError(a.path.string() + " exists and is not a result file",
                             "remove it, or pass another --output-dir");
    core::check_output_path(a.path, "remove it, or pass another --output-dir");
    // A log whose figures make a result the schema refuses is bad input, refused before any
    // result is written (write_result would refuse it after the others were on disk).
    a.doc = bench::as_written(std::move(a.doc));
    if (const auto why = bench::result_error(a.doc))
      throw core::InputError(a.log + " gives a result that breaks schema/result.schema.json: " +
                                 *why,
                             "the log is damaged: repair or remove the lines behind that figure");
    if (const auto why = bench::unreadable_size(a.doc.dump(2).size() + 1))
      throw core::InputError(a.log + " gives a result too large to keep: " + *why,
                             "import a part of the log (fewer iterations)");
    a.replaced = bench::existing_result_differences(a.path, a.doc);
    if (!o.overwrite && a.replaced && !a.replaced->empty())
      throw bench::ResultConflict(bench::conflict_message(a.path, *a.replaced, result_fixes));
  }
  for (const auto& a : imported) report::prepare_output_dir(a.path.parent_path());
  // Held as a bench run holds its result: no run in the same directory replaces an import
  // while it is written, and no import one being written.
  std::vector<std::filesystem::path> results;
  for (const auto& a : imported) results.push_back(a.path);
  std::vector<std::string> notices;
  const auto locks = lock_outputs(results, lock_owner_text(command_line), notices);
  for (const auto& n : notices) std::fprintf(stderr, "%s\n", n.c_str());
  for (auto& a : imported) {  // again under the lock: a run may have written it meanwhile
    a.replaced = bench::existing_result_differences(a.path, a.doc);
    if (!o.overwrite && a.replaced && !a.replaced->empty())
      throw bench::ResultConflict(bench::conflict_message(a.path, *a.replaced, result_fixes));
  }
  for (const auto& a : imported) {
    bench::write_result(a.path, a.doc, result_fixes);
    std::string note;
    if (a.replaced && a.replaced->empty()) {
      note = "; replaced the previous result of this configuration";
    } else if (a.replaced) {
      note = "; replaced a result of another configuration (--overwrite):";
      for (const auto& d : *a.replaced) note += " " + d + ",";
      note.pop_back();
    }
    std::printf("imported %s (%d iterations, %d measured): wrote %s%s\n", a.log.c_str(),
                a.doc["imported"]["iterations_found"].get<int>(),
                a.doc["performance_metrics"]["measured_steps"].get<int>(), a.path.c_str(),
                note.c_str());
    for (const auto& w : a.doc["warnings"])  // made by bench::as_written
      std::fprintf(stderr, "tprimat: warning: %s: %s\n", a.path.c_str(),
                   w.get<std::string>().c_str());
  }
  for (const auto& p : problems) std::fprintf(stderr, "%s\n", p.c_str());
  return 0;
}

/// The exit code of the report subcommand that was parsed; nullopt when none was.
inline std::optional<int> run_report_command(const ReportCommands& cmds) {
  if (cmds.compare->parsed()) return run_compare(cmds.compare_opts);
  if (cmds.peak->parsed()) return run_peak(cmds.peak_opts);
  if (cmds.import->parsed()) return run_import(cmds.import_opts, cmds.command_line);
  return std::nullopt;
}

}  // namespace tprimat::cli
