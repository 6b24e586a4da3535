// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// compare.csv and peak.csv: one row per result, every configuration field and figure, units named.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/bench/experiment.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

/// One CSV field as RFC 4180 writes it: quoted where it holds a comma, a quote, a line break or
/// edge spaces, a quote doubled inside. Control characters are escaped first (printable()), so a
/// name never breaks a row, whatever a spreadsheet does with quoted line breaks; a name that a
/// spreadsheet would run as a formula (=, +, -, @ first, and not a number) starts with a '.
inline std::string csv_field(std::string_view text) {
  std::string s = printable(text);
  if (!s.empty() && std::string_view("=+-@").find(s.front()) != std::string_view::npos) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) s.insert(0, 1, '\'');
  }
  const bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// A number with the digits a double holds; "" (an empty cell) where unknown.
inline std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

namespace detail {

/// A configuration field's value as a cell: "17+15" for a pipeline split, "true"/"false", text
/// as recorded (a sharding strategy's Megatron-FSDP name, not its label's "ZeRO-2"), "" where
/// the file does not say.
inline std::string csv_experiment_value(std::size_t i, const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_string()) return value.get<std::string>();
  return bench::experiment_label(i, value).substr(bench::experiment_fields[i].name.size() + 1);
}

/// The unit of a configuration field's column, "" where it has none.
inline std::string_view csv_experiment_unit(std::string_view pointer) {
  if (pointer == "/training_config/micro_batch_size" ||
      pointer == "/training_config/global_batch_size")
    return "sequences";
  if (pointer == "/training_config/sequence_length") return "tokens";
  if (pointer == "/parallelism_config/pipeline_layers" || pointer == "/training_config/num_layers")
    return "layers";
  if (pointer == "/gpu_info/device_count") return "GPUs";
  return "";
}

/// Configuration field `i` of `r`; where the file does not state it (the seeds'), what the report
/// read in its place (the model from the file name, the GPUs from gpu_info, tokens/s's batch).
inline nlohmann::json csv_config_value(const Result& r, std::size_t i) {
  if (i < r.experiment.size() && !r.experiment[i].is_null()) return r.experiment[i];
  const std::string_view pointer = bench::experiment_fields[i].pointer;
  if (pointer == "/platform") return r.platform;
  if (pointer == "/model/cli_name") return r.model;
  if (pointer == "/gpu_info/device_name") return r.device_name;
  if (pointer == "/gpu_info/device_count") return r.num_gpus;
  if (pointer == "/parallelism_config/strategy_name") return r.strategy;
  if (pointer == "/training_config/global_batch_size" && r.gbs > 0) return r.gbs;
  if (pointer == "/training_config/sequence_length" && r.seq > 0) return r.seq;
  if (pointer == "/parallelism_config/tensor_model_parallel_size" && r.tp > 0) return r.tp;
  if (pointer == "/parallelism_config/pipeline_model_parallel_size" && r.pp > 0) return r.pp;
  if (pointer == "/parallelism_config/data_parallel_size" && r.dp > 0) return r.dp;
  if (pointer == "/training_config/precision" && !r.precision.empty()) return r.precision;
  return nullptr;
}

inline std::string csv_header_cell(std::string_view name, std::string_view unit) {
  return csv_field(unit.empty() ? std::string(name)
                                : std::string(name) + " [" + std::string(unit) + "]");
}

}  // namespace detail

/// One extra column of a CSV: its header and a cell per result.
struct CsvColumn {
  std::string header;
  std::vector<std::string> cells;
};

/// The CSV of `results`: the file and its run, the framework, every bench::experiment_fields
/// field, every figure the reports show (units in brackets), whether it is flagged and why, then
/// `extra` columns. An unknown value is an empty cell.
inline std::string results_csv(const std::vector<const Result*>& results,
                               const std::vector<CsvColumn>& extra = {}) {
  std::vector<std::string> header{"file", "run", "framework"};
  for (const auto& f : bench::experiment_fields)
    header.push_back(detail::csv_header_cell(f.name, detail::csv_experiment_unit(f.pointer)));
  for (const auto& [name, unit] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"tokens/s", "tokens/s"},
           {"tokens/s/GPU", "tokens/s/GPU"},
           {"step time mean", "s"},
           {"step time std", "s"},
           {"measured steps", "steps"},
           {"TFLOP/s/GPU PaLM", "TFLOP/s"},
           {"TFLOP/s/GPU 6N", "TFLOP/s"},
           {"MFU dense bf16 peak", "%"},
           {"MFU dense FP8 peak", "%"},
           {"TFLOP/s/GPU causal", "TFLOP/s"},
           {"MFU causal dense bf16 peak", "%"},
           {"MFU causal dense FP8 peak", "%"},
           {"dense bf16 peak", "TFLOP/s"},
           {"dense FP8 peak", "TFLOP/s"},
           {"peak allocated per GPU", "GiB"},
           {"predicted memory per GPU", "GiB"},
           {"flagged", ""},
           {"warnings", ""}})
    header.push_back(detail::csv_header_cell(name, unit));
  for (const auto& c : extra) header.push_back(csv_field(c.header));
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i == 0 ? "" : ",") + cells[i];
    out += "\r\n";  // RFC 4180's line end
  };
  line(header);
  for (std::size_t k = 0; k < results.size(); ++k) {
    const Result& r = *results[k];
    std::vector<std::string> row{csv_field(r.file), csv_field(r.run), csv_field(r.framework)};
    for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
      row.push_back(csv_field(detail::csv_experiment_value(i, detail::csv_config_value(r, i))));
    std::string warnings;
    for (const auto& w : r.warnings()) warnings += (warnings.empty() ? "" : "; ") + w;
    for (double v :
         {r.tokens_per_second, r.tokens_per_second_per_gpu, r.avg_step_time, r.std_step_time,
          r.step_times.empty() ? unknown : double(r.step_times.size()), r.tflops_per_gpu(),
          r.tflops_per_gpu_6n(), 100 * r.mfu(), 100 * r.mfu_fp8_peak(), r.tflops_per_gpu_causal(),
          100 * r.mfu_causal(), 100 * r.mfu_fp8_peak_causal(),
          r.peak_tflops_dense > 0 ? r.peak_tflops_dense : unknown,
          r.peak_tflops_fp8_dense > 0 ? r.peak_tflops_fp8_dense : unknown, r.memory_gb,
          r.predicted_memory_gb})
      row.push_back(csv_number(v));
    row.push_back(r.usable_for_ranking() ? "false" : "true");
    row.push_back(csv_field(warnings));
    for (const auto& c : extra) row.push_back(csv_field(k < c.cells.size() ? c.cells[k] : ""));
    line(row);
  }
  return out;
}

}  // namespace tprimat::report
