// Reading, writing and printing benchmark reports (schema "tilescope-bench/1", CPU or GPU): the
// CLI prints the table from the same BenchReport (kernels/bench_types.h) the app and lessons read.
#pragma once

#include "kernels/bench_types.h"

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

// Reads a report file and checks it against the schema (through BenchReport's from_json).
BenchReport load_bench_report(const std::string& path);
// The same check, returning the document as it was read (the app keeps it as JSON).
nlohmann::json read_bench_report(const std::string& path);
// Writes with two-space indentation; throws BenchReportError when the file cannot be written.
void write_bench_report(const BenchReport& report, const std::string& path);
// Checks a report already in memory; returns "" when it is fine, else what is wrong and where.
std::string check_bench_report(const nlohmann::json& report);

// The human table: a header (machine, compiler, peaks), then per suite one row per version with
// median/min ms, GFLOP/s, GB/s, % of the reference, % of peak, relative error and verification,
// then the suite's comparisons (measured time ratio next to the byte ratio).
std::string format_bench_table(const BenchReport& report);

}  // namespace tilescope::kernels
