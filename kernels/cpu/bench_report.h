// Reading, writing and printing benchmark reports (bench_schema "tilescope-bench/1", CPU or GPU):
// the CLI prints the table from the same JSON the app and the lessons read.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace tilescope::kernels {

// A report file that cannot be read or does not follow the schema; the message names the file and
// the field.
class BenchReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses and checks the fields the table and the app rely on (schema, kind, suites[].results[]).
nlohmann::json read_bench_report(const std::string& path);
// Writes with two-space indentation; throws BenchReportError when the file cannot be written.
void write_bench_report(const nlohmann::json& report, const std::string& path);
// Checks a report already in memory; returns "" when it is fine, else what is wrong.
std::string check_bench_report(const nlohmann::json& report);

// The human table: a header (machine, compiler, peaks), then per suite one row per version with
// median/min ms, GFLOP/s, GB/s, % of the reference, % of peak, relative error and verification,
// then the suite's comparisons (measured time ratio next to the byte ratio).
std::string format_bench_table(const nlohmann::json& report);

}  // namespace tilescope::kernels
