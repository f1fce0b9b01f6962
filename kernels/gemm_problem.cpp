// The GEMM (+ bias + ReLU) problem of the bench suites: shapes, seeds, counts, the float64
// reference.
#include "kernels/gemm_problem.h"

#include <algorithm>
#include <stdexcept>

namespace tilescope::kernels {

double GemmProblem::flops() const {
  const double mn = double(m) * n;
  return 2.0 * mn * k + (bias_relu ? 2.0 * mn : 0.0);
}

double GemmProblem::compulsory_bytes(int operand_bytes) const {
  const double operands = double(operand_bytes) * (double(a_count()) + double(b_count()));
  return operands + 4.0 * ((bias_relu ? double(n) : 0.0) + double(y_count()));
}

double GemmProblem::epilogue_pass_bytes() const {
  return 2.0 * 4.0 * double(y_count());
}

double GemmProblem::bytes(int epilogue_passes, int operand_bytes) const {
  return compulsory_bytes(operand_bytes) + epilogue_passes * epilogue_pass_bytes();
}

std::string GemmProblem::shape_text() const {
  return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
}

nlohmann::json GemmProblem::sizes() const {
  return {{"M", m}, {"N", n}, {"K", k}};
}

GemmProblem gemm_problem(GemmSuite suite, bool quick) {
  auto make = [](int m, int n, int k, std::uint64_t seed, const char* reference) {
    GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.seed = seed, p.reference = reference;
    return p;
  };
  GemmProblem p;
  switch (suite) {
    // CPU quick sizes are deliberately not multiples of any tile (MR, NR, 256), so edges run.
    case GemmSuite::cpu_matmul:
      p = quick ? make(160, 200, 176, 1, "eigen") : make(1024, 1024, 1024, 1, "eigen");
      break;
    case GemmSuite::cpu_jit:
      p = quick ? make(100, 100, 100, 31, "eigen") : make(1024, 1024, 1024, 31, "eigen");
      break;
    // Partial tiles on every loop the schedule splits (20 = 2·8 + 4 rows, 300 = 256 + 32 + 12
    // columns), so the guards of the generated code and the hand twin's edge blocks both run.
    case GemmSuite::cpu_schedule_twin:
      p = quick ? make(20, 300, 40, 41, "eigen") : make(1024, 1024, 1024, 41, "eigen");
      break;
    case GemmSuite::gpu_sgemm:
      p = quick ? make(1024, 1024, 1024, 1000, "cublas") : make(4096, 4096, 4096, 1000, "cublas");
      p.bias_relu = false;
      break;
    case GemmSuite::gpu_hgemm:
      p = quick ? make(1024, 1024, 1024, 2000, "cublas") : make(4096, 4096, 4096, 2000, "cublas");
      p.bias_relu = false;
      p.layout = GemmLayout::w_n_by_k;
      break;
    // K = 256: the product is short, so the epilogue's extra passes over Y show in the time.
    case GemmSuite::gpu_gemm_epilogue:
      p = quick ? make(1024, 1024, 256, 4000, "cublas") : make(4096, 4096, 256, 4000, "cublas");
      break;
    case GemmSuite::gpu_jit_twin:
      p = quick ? make(1024, 1024, 512, 6000, "cublas") : make(4096, 4096, 1024, 6000, "cublas");
      break;
    case GemmSuite::gpu_schedule_twin:
      p = quick ? make(1024, 1024, 512, 7000, "cublas") : make(4096, 4096, 1024, 7000, "cublas");
      p.layout = GemmLayout::w_n_by_k;
      break;
    default:
      throw std::invalid_argument("gemm_problem: unknown GemmSuite");
  }
  return p;
}

double gemm_reference_at(const GemmProblem& p, const float* a, const float* b, const float* bias,
                         int i, int j) {
  double acc = 0.0;
  for (int kk = 0; kk < p.k; ++kk) {
    const double bv = p.layout == GemmLayout::w_n_by_k ? b[std::size_t(j) * p.k + kk]
                                                       : b[std::size_t(kk) * p.n + j];
    acc += double(a[std::size_t(i) * p.k + kk]) * bv;
  }
  if (p.bias_relu) acc = std::max(acc + double(bias[j]), 0.0);
  return acc;
}

}  // namespace tilescope::kernels
