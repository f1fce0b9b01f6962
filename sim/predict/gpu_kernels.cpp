// Trace descriptions of the hand-written CUDA kernels and the counters they predict (gpu_kernels.h).
//
// Index: [SECTION] Shared-memory phases · [SECTION] Kernel descriptions · [SECTION] L1 ·
//        [SECTION] L2 replay · [SECTION] Prediction
#include "sim/predict/gpu_kernels.h"

#include "sim/memory/hierarchy.h"
#include "sim/predict/l2_partitions.h"
#include "sim/predict/occupancy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <unordered_map>

namespace tilescope::predict {

// [SECTION] Shared-memory phases

SharedCost shared_warp_cost(const std::vector<LaneAddr>& lanes, uint32_t banks,
                            uint32_t bank_width) {
  SharedCost cost;
  if (lanes.empty() || banks == 0 || banks > 64 || bank_width == 0) return cost;
  const uint32_t bytes = std::max<uint32_t>(lanes[0].bytes, bank_width);
  // The data path returns 128 bytes (one 32-bit register for 32 lanes) per wavefront, so a
  // 16-byte access takes quarter-warp phases, an 8-byte one half-warps. When every lane shares its
  // address with lane n^1, or every lane with lane n^2, two phases' lanes need only one phase's
  // distinct data and are served together (NVIDIA's description of uniform-address shared loads).
  size_t phase_lanes = std::max<size_t>(1, 32 / std::max<uint32_t>(1, bytes / bank_width));
  auto paired = [&](size_t mask) {
    for (size_t l = 0; l < lanes.size(); ++l)
      if ((l ^ mask) < lanes.size() && lanes[l ^ mask].addr != lanes[l].addr) return false;
    return true;
  };
  if (phase_lanes < 32 && (paired(1) || paired(2))) phase_lanes *= 2;
  for (size_t start = 0; start < lanes.size(); start += phase_lanes) {
    const size_t end = std::min(lanes.size(), start + phase_lanes);
    // Distinct words per bank (a phase asks for at most 32 words, 128 bytes' worth per lane set).
    std::array<std::array<uint64_t, 128>, 64> words;
    std::array<uint32_t, 64> count{};
    uint32_t degree = 0;
    for (size_t l = start; l < end; ++l) {
      for (uint32_t b = 0; b < lanes[l].bytes; b += bank_width) {
        const uint64_t word = (lanes[l].addr + b) / bank_width;
        const size_t bank = word % banks;
        auto& in_bank = words[bank];
        uint32_t& n = count[bank];
        if (std::find(in_bank.begin(), in_bank.begin() + n, word) == in_bank.begin() + n &&
            n < in_bank.size()) {
          in_bank[n++] = word;
          degree = std::max(degree, n);
        }
      }
    }
    cost.wavefronts += degree;
    cost.ideal += 1;
  }
  return cost;
}

// [SECTION] Kernel descriptions

namespace {

enum Tensor : int16_t { kA = 0, kB = 1, kC = 2, kBias = 3 };

constexpr uint32_t kSector = 32;
constexpr uint32_t kLine = 128;  // an L1 line: what one data-stage pass moves

// One warp instruction's lanes.
struct Warp {
  std::array<LaneAddr, 32> lane{};
  int lanes = 32;
};

// What a kernel description emits, for one block at a time; addresses are absolute for the
// representative block (tile 0, 0), tensors at their bases.
class Emit {
 public:
  virtual ~Emit() = default;
  virtual void global(Tensor t, bool write, const Warp& w) = 0;
  virtual void shared(bool write, const Warp& w) = 0;
};

struct Bases {
  uint64_t a = 0, b = 0, c = 0, bias = 0;
};

// A kernel as the twin sees it: its grid, occupancy inputs, serial-loop length and step
// function, and where each tensor's tile of block (tx, ty) starts relative to tile (0, 0).
struct Desc {
  std::string name;
  int grid_x = 1, grid_y = 1;  // launch grid (x fastest)
  bool x_is_rows = false;      // sgemm_01 launches blockIdx.x along M
  int threads = 256;
  int registers = 32;          // per thread, nvcc -Xptxas -v (kernels/cuda/NOTES.md)
  int smem_bytes = 0;          // static + dynamic shared memory per block
  int bm = 0, bn = 0, bk = 1;  // output tile rows, columns; K per serial step
  int steps = 1;               // serial-loop iterations at full K
  bool elementwise = false;    // tiles are 1-D slices of a matrix
  int elems_per_block = 0;     // elementwise: floats per block
  // Emits step `s` (0 .. steps-1) of the representative block; `s == steps` is the epilogue.
  // `sample_rows`: the epilogue stores only rows r with r % sample_rows == 0.
  std::function<void(int s, int sample_rows, Emit&)> step;
};

Warp lanes_of(const std::function<LaneAddr(int lane)>& f, int count = 32) {
  Warp w;
  w.lanes = count;
  for (int l = 0; l < count; ++l) w.lane[static_cast<size_t>(l)] = f(l);
  return w;
}

uint64_t f4(uint64_t elements) {
  return elements * 4;
}

// The SGEMM progression. Each description follows its .cuh line by line: the warp of thread
// `tid` is tid / 32, and a warp's lanes are its 32 consecutive threads.
// A description's precondition on the shape: throws naming the kernel when `ok` is false.
void need_shape(const Desc& d, bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(d.name + ": " + what);
}

// Versions 1–3: one output per thread, plain, coalesced, then staged through shared memory.
void sgemm_desc_1_to_3(Desc& d, int version, int M, int N, int K, const Bases& base) {
  const uint64_t A = base.a, B = base.b, C = base.c;
  const auto need = [&](bool ok, const std::string& what) { need_shape(d, ok, what); };
  switch (version) {
    case 1: {  // 32×32 threads, threadIdx.x (the lane) walks M; one output per thread
      need(M % 32 == 0 && N % 32 == 0, "M and N must be multiples of 32");
      d.grid_x = M / 32, d.grid_y = N / 32, d.x_is_rows = true;
      d.threads = 1024, d.registers = 32, d.bm = 32, d.bn = 32, d.bk = 1, d.steps = K;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 32; ++w) {  // threadIdx.y = w is the column
          if (s < K) {
            e.global(kA, false, lanes_of([&](int l) {
                       return LaneAddr{A + f4(uint64_t(l) * K + s), 4};
                     }));
            e.global(kB, false, lanes_of([&](int) {
                       return LaneAddr{B + f4(uint64_t(s) * N + w), 4};
                     }));
          } else {
            std::vector<int> rows;
            for (int l = 0; l < 32; ++l)
              if (l % sample == 0) rows.push_back(l);
            Warp st;
            st.lanes = static_cast<int>(rows.size());
            for (size_t i = 0; i < rows.size(); ++i)
              st.lane[i] = {C + f4(uint64_t(rows[i]) * N + w), 4};
            if (st.lanes) e.global(kC, true, st);
          }
        }
      };
      break;
    }
    case 2: {  // warp w owns row w of the 32×32 tile, lanes its 32 columns
      need(M % 32 == 0 && N % 32 == 0, "M and N must be multiples of 32");
      d.grid_x = N / 32, d.grid_y = M / 32;
      d.threads = 1024, d.registers = 32, d.bm = 32, d.bn = 32, d.bk = 1, d.steps = K;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 32; ++w) {
          if (s < K) {
            e.global(kA, false, lanes_of([&](int) {
                       return LaneAddr{A + f4(uint64_t(w) * K + s), 4};
                     }));
            e.global(kB, false, lanes_of([&](int l) {
                       return LaneAddr{B + f4(uint64_t(s) * N + l), 4};
                     }));
          } else if (w % sample == 0) {
            e.global(kC, true, lanes_of([&](int l) {
                       return LaneAddr{C + f4(uint64_t(w) * N + l), 4};
                     }));
          }
        }
      };
      break;
    }
    case 3: {  // 32×32 tiles of A and B in shared memory; warp w = tile row w
      need(M % 32 == 0 && N % 32 == 0 && K % 32 == 0, "M, N and K must be multiples of 32");
      d.grid_x = N / 32, d.grid_y = M / 32;
      d.threads = 1024, d.registers = 32, d.smem_bytes = 8192, d.bm = 32, d.bn = 32, d.bk = 32;
      d.steps = K / 32;
      const uint64_t As = 0, Bs = 4096;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 32; ++w) {
          if (s < K / 32) {
            const uint64_t k0 = uint64_t(s) * 32;
            e.global(kA, false, lanes_of([&](int l) {
                       return LaneAddr{A + f4(uint64_t(w) * K + k0 + l), 4};
                     }));
            e.global(kB, false, lanes_of([&](int l) {
                       return LaneAddr{B + f4((k0 + w) * N + l), 4};
                     }));
            e.shared(true, lanes_of([&](int l) { return LaneAddr{As + f4(w * 32 + l), 4}; }));
            e.shared(true, lanes_of([&](int l) { return LaneAddr{Bs + f4(w * 32 + l), 4}; }));
            // As SASS has it: nvcc reads the row of As a thread walks (As[ty·32 + k], the same
            // for every lane) four k at a time with LDS.128; Bs one k at a time.
            for (int k = 0; k < 32; k += 4)
              e.shared(false, lanes_of([&](int) { return LaneAddr{As + f4(w * 32 + k), 16}; }));
            for (int k = 0; k < 32; ++k)
              e.shared(false, lanes_of([&](int l) { return LaneAddr{Bs + f4(k * 32 + l), 4}; }));
          } else if (w % sample == 0) {
            e.global(kC, true, lanes_of([&](int l) {
                       return LaneAddr{C + f4(uint64_t(w) * N + l), 4};
                     }));
          }
        }
      };
      break;
    }
    default:
      throw std::invalid_argument("sgemm_desc_1_to_3 has no version " + std::to_string(version));
  }
}

// Versions 4 and 5: block tiles with several outputs per thread (1-D, then 2-D).
void sgemm_desc_4_5(Desc& d, int version, int M, int N, int K, const Bases& base) {
  const uint64_t A = base.a, B = base.b, C = base.c;
  const auto need = [&](bool ok, const std::string& what) { need_shape(d, ok, what); };
  switch (version) {
    case 4: {  // 64×64×8 tiles, 512 threads, 8 outputs down a column per thread
      need(M % 64 == 0 && N % 64 == 0 && K % 8 == 0, "M, N multiples of 64 and K of 8");
      d.grid_x = N / 64, d.grid_y = M / 64;
      d.threads = 512, d.registers = 56, d.smem_bytes = 4096, d.bm = 64, d.bn = 64, d.bk = 8;
      d.steps = K / 8;
      const uint64_t As = 0, Bs = 2048;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 16; ++w) {
          auto tid = [w](int l) { return w * 32 + l; };
          if (s < K / 8) {
            const uint64_t k0 = uint64_t(s) * 8;
            e.global(kA, false, lanes_of([&](int l) {
                       return LaneAddr{A + f4(uint64_t(tid(l) / 8) * K + k0 + tid(l) % 8), 4};
                     }));
            e.global(kB, false, lanes_of([&](int l) {
                       return LaneAddr{B + f4((k0 + tid(l) / 64) * N + tid(l) % 64), 4};
                     }));
            e.shared(true, lanes_of([&](int l) {
                       return LaneAddr{As + f4((tid(l) / 8) * 8 + tid(l) % 8), 4};
                     }));
            e.shared(true, lanes_of([&](int l) {
                       return LaneAddr{Bs + f4((tid(l) / 64) * 64 + tid(l) % 64), 4};
                     }));
            // As SASS has it: the unrolled k loop reads each row i of a thread's As values as two
            // LDS.128 (k 0–3, 4–7); Bs one k at a time.
            for (int i = 0; i < 8; ++i)
              for (int k = 0; k < 8; k += 4)
                e.shared(false, lanes_of([&](int l) {
                           return LaneAddr{As + f4(((tid(l) / 64) * 8 + i) * 8 + k), 16};
                         }));
            for (int k = 0; k < 8; ++k)
              e.shared(false, lanes_of([&](int l) {
                         return LaneAddr{Bs + f4(k * 64 + tid(l) % 64), 4};
                       }));
          } else {
            for (int i = 0; i < 8; ++i) {
              const int row = (tid(0) / 64) * 8 + i;  // one thread_row per warp
              if (row % sample) continue;
              e.global(kC, true, lanes_of([&](int l) {
                         return LaneAddr{C + f4(uint64_t(row) * N + tid(l) % 64), 4};
                       }));
            }
          }
        }
      };
      break;
    }
    case 5: {  // 128×128×8 tiles, 256 threads, 8×8 outputs per thread, scalar accesses
      need(M % 128 == 0 && N % 128 == 0 && K % 8 == 0, "M, N multiples of 128 and K of 8");
      d.grid_x = N / 128, d.grid_y = M / 128;
      d.threads = 256, d.registers = 128, d.smem_bytes = 8192, d.bm = 128, d.bn = 128, d.bk = 8;
      d.steps = K / 8;
      const uint64_t As = 0, Bs = 4096;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 8; ++w) {
          auto tid = [w](int l) { return w * 32 + l; };
          if (s < K / 8) {
            const uint64_t k0 = uint64_t(s) * 8;
            for (int off = 0; off < 128; off += 32)
              e.global(
                  kA, false, lanes_of([&](int l) {
                    return LaneAddr{A + f4(uint64_t(tid(l) / 8 + off) * K + k0 + tid(l) % 8), 4};
                  }));
            for (int off = 0; off < 8; off += 2)
              e.global(kB, false, lanes_of([&](int l) {
                         return LaneAddr{B + f4((k0 + tid(l) / 128 + off) * N + tid(l) % 128), 4};
                       }));
            for (int off = 0; off < 128; off += 32)
              e.shared(true, lanes_of([&](int l) {
                         return LaneAddr{As + f4((tid(l) / 8 + off) * 8 + tid(l) % 8), 4};
                       }));
            for (int off = 0; off < 8; off += 2)
              e.shared(true, lanes_of([&](int l) {
                         return LaneAddr{Bs + f4((tid(l) / 128 + off) * 128 + tid(l) % 128), 4};
                       }));
            // As SASS has it: nvcc turns the scalar reads into LDS.128 — As over k (a thread's row
            // i, k 0–3 and 4–7), Bs over j (its 8 columns at one k).
            for (int i = 0; i < 8; ++i)
              for (int k = 0; k < 8; k += 4)
                e.shared(false, lanes_of([&](int l) {
                           return LaneAddr{As + f4(((tid(l) / 16) * 8 + i) * 8 + k), 16};
                         }));
            for (int k = 0; k < 8; ++k)
              for (int j = 0; j < 8; j += 4)
                e.shared(false, lanes_of([&](int l) {
                           return LaneAddr{Bs + f4(k * 128 + (tid(l) % 16) * 8 + j), 16};
                         }));
          } else {
            for (int i = 0; i < 8; ++i)
              for (int j = 0; j < 8; ++j)
                e.global(kC, true, lanes_of([&](int l) {
                           const int row = (tid(l) / 16) * 8 + i;
                           return LaneAddr{row % sample
                                               ? ~uint64_t{0}
                                               : C + f4(uint64_t(row) * N + (tid(l) % 16) * 8 + j),
                                           4};
                         }));
          }
        }
      };
      break;
    }
    default:
      throw std::invalid_argument("sgemm_desc_4_5 has no version " + std::to_string(version));
  }
}

// Version 6: float4 accesses, A transposed into shared memory.
void sgemm_desc_6(Desc& d, int version, int M, int N, int K, const Bases& base) {
  const uint64_t A = base.a, B = base.b, C = base.c;
  const auto need = [&](bool ok, const std::string& what) { need_shape(d, ok, what); };
  switch (version) {
    case 6: {  // float4 global accesses, A transposed into shared memory, LDS.128 in the loop
      need(M % 128 == 0 && N % 128 == 0 && K % 8 == 0, "M, N multiples of 128 and K of 8");
      d.grid_x = N / 128, d.grid_y = M / 128;
      d.threads = 256, d.registers = 127, d.smem_bytes = 8192, d.bm = 128, d.bn = 128, d.bk = 8;
      d.steps = K / 8;
      const uint64_t As = 0, Bs = 4096;
      d.step = [=](int s, int sample, Emit& e) {
        for (int w = 0; w < 8; ++w) {
          auto tid = [w](int l) { return w * 32 + l; };
          if (s < K / 8) {
            const uint64_t k0 = uint64_t(s) * 8;
            e.global(
                kA, false, lanes_of([&](int l) {
                  return LaneAddr{A + f4(uint64_t(tid(l) / 2) * K + k0 + (tid(l) % 2) * 4), 16};
                }));
            e.global(kB, false, lanes_of([&](int l) {
                       return LaneAddr{B + f4((k0 + tid(l) / 32) * N + (tid(l) % 32) * 4), 16};
                     }));
            for (int c = 0; c < 4; ++c)
              e.shared(true, lanes_of([&](int l) {
                         return LaneAddr{As + f4(((tid(l) % 2) * 4 + c) * 128 + tid(l) / 2), 4};
                       }));
            e.shared(true, lanes_of([&](int l) {
                       return LaneAddr{Bs + f4((tid(l) / 32) * 128 + (tid(l) % 32) * 4), 16};
                     }));
            for (int k = 0; k < 8; ++k) {
              for (int i = 0; i < 8; i += 4)
                e.shared(false, lanes_of([&](int l) {
                           return LaneAddr{As + f4(k * 128 + (tid(l) / 16) * 8 + i), 16};
                         }));
              for (int j = 0; j < 8; j += 4)
                e.shared(false, lanes_of([&](int l) {
                           return LaneAddr{Bs + f4(k * 128 + (tid(l) % 16) * 8 + j), 16};
                         }));
            }
          } else {
            for (int i = 0; i < 8; ++i)
              for (int j = 0; j < 8; j += 4)
                e.global(kC, true, lanes_of([&](int l) {
                           const int row = (tid(l) / 16) * 8 + i;
                           return LaneAddr{row % sample
                                               ? ~uint64_t{0}
                                               : C + f4(uint64_t(row) * N + (tid(l) % 16) * 8 + j),
                                           16};
                         }));
          }
        }
      };
      break;
    }
    default:
      throw std::invalid_argument("sgemm_desc_6 has no version " + std::to_string(version));
  }
}

// Versions 7 and 8: warp tiles (8 double-buffered, with the fused bias + ReLU epilogue).
void sgemm_desc_7_8(Desc& d, int version, int M, int N, int K, const Bases& base, bool bias_relu) {
  const uint64_t A = base.a, B = base.b, C = base.c, BIAS = base.bias;
  const auto need = [&](bool ok, const std::string& what) { need_shape(d, ok, what); };
  switch (version) {
    case 7:
    case 8: {  // warp tiles 32×64, 2×2 sub-blocks of 4×4 per thread; A padded to 132 floats a row
      need(M % 128 == 0 && N % 128 == 0 && K % 8 == 0, "M, N multiples of 128 and K of 8");
      d.grid_x = N / 128, d.grid_y = M / 128;
      d.threads = 256, d.bm = 128, d.bn = 128, d.bk = 8, d.steps = K / 8;
      const bool dbl = version == 8;
      d.registers = dbl ? 128 : 121;
      d.smem_bytes = dbl ? 2 * (8 * 132 + 8 * 128) * 4 : (8 * 132 + 8 * 128) * 4;
      const uint64_t As = 0, Bs = (dbl ? 2 : 1) * 8 * 132 * 4;
      d.step = [=](int s, int sample, Emit& e) {
        const int buf = dbl ? s % 2 : 0;
        const uint64_t as = As + uint64_t(buf) * 8 * 132 * 4, bs = Bs + uint64_t(buf) * 8 * 128 * 4;
        for (int w = 0; w < 8; ++w) {
          auto tid = [w](int l) { return w * 32 + l; };
          auto row0 = [w](int l) { return (w / 2) * 32 + (l / 8) * 4; };
          auto col0 = [w](int l) { return (w % 2) * 64 + (l % 8) * 4; };
          if (s < K / 8) {
            const uint64_t k0 = uint64_t(s) * 8;
            e.global(
                kA, false, lanes_of([&](int l) {
                  return LaneAddr{A + f4(uint64_t(tid(l) / 2) * K + k0 + (tid(l) % 2) * 4), 16};
                }));
            e.global(kB, false, lanes_of([&](int l) {
                       return LaneAddr{B + f4((k0 + tid(l) / 32) * N + (tid(l) % 32) * 4), 16};
                     }));
            for (int c = 0; c < 4; ++c)
              e.shared(true, lanes_of([&](int l) {
                         return LaneAddr{as + f4(((tid(l) % 2) * 4 + c) * 132 + tid(l) / 2), 4};
                       }));
            e.shared(true, lanes_of([&](int l) {
                       return LaneAddr{bs + f4((tid(l) / 32) * 128 + (tid(l) % 32) * 4), 16};
                     }));
            for (int k = 0; k < 8; ++k) {
              e.shared(false, lanes_of([&](int l) {
                         return LaneAddr{as + f4(k * 132 + row0(l)), 16};
                       }));
              e.shared(false, lanes_of([&](int l) {
                         return LaneAddr{as + f4(k * 132 + row0(l) + 16), 16};
                       }));
              e.shared(false, lanes_of([&](int l) {
                         return LaneAddr{bs + f4(k * 128 + col0(l)), 16};
                       }));
              e.shared(false, lanes_of([&](int l) {
                         return LaneAddr{bs + f4(k * 128 + col0(l) + 32), 16};
                       }));
            }
          } else {
            for (int i = 0; i < 8; ++i)
              for (int jh = 0; jh < 2; ++jh) {
                if (bias_relu && i % sample == 0)
                  e.global(kBias, false, lanes_of([&](int l) {
                             return LaneAddr{BIAS + f4(col0(l) + jh * 32), 16};
                           }));
                e.global(kC, true, lanes_of([&](int l) {
                           const int row = row0(l) + (i / 4) * 16 + i % 4;
                           return LaneAddr{row % sample
                                               ? ~uint64_t{0}
                                               : C + f4(uint64_t(row) * N + col0(l) + jh * 32),
                                           16};
                         }));
              }
          }
        }
      };
      break;
    }
    default:
      throw std::invalid_argument("sgemm_desc_7_8 has no version " + std::to_string(version));
  }
}

// The SGEMM progression (above, by version).
Desc sgemm_desc(int version, int M, int N, int K, const Bases& base, bool bias_relu) {
  Desc d;
  d.name = "sgemm_0" + std::to_string(version) + (bias_relu ? "_bias_relu" : "");
  switch (version) {
    case 1:
    case 2:
    case 3:
      sgemm_desc_1_to_3(d, version, M, N, K, base);
      break;
    case 4:
    case 5:
      sgemm_desc_4_5(d, version, M, N, K, base);
      break;
    case 6:
      sgemm_desc_6(d, version, M, N, K, base);
      break;
    case 7:
    case 8:
      sgemm_desc_7_8(d, version, M, N, K, base, bias_relu);
      break;
    default:
      throw std::invalid_argument("no SGEMM version " + std::to_string(version));
  }
  need_shape(d, !bias_relu || version == 8, "only version 8 has the fused bias + ReLU epilogue");
  return d;
}

// Tensor-core GEMM 2: cp.async.cg copies (L2 only, no L1 allocation) of 128×32 fp16 tiles of A
// and W per step, 16 bytes a thread; fp32 C stored as float2 pairs in the mma.sync accumulator
// layout. Its ldmatrix reads of the swizzled tiles are not described (no shared prediction).
Desc hgemm2_desc(int M, int N, int K, const Bases& base, bool bias_relu) {
  if (M % 128 || N % 128 || K % 32)
    throw std::invalid_argument("hgemm_02: M, N multiples of 128 and K of 32");
  Desc d;
  d.name = bias_relu ? "hgemm_02_bias_relu" : "hgemm_02";
  d.grid_x = N / 128, d.grid_y = M / 128;
  d.threads = 128, d.registers = 220, d.smem_bytes = 65536, d.bm = 128, d.bn = 128, d.bk = 32;
  d.steps = K / 32;
  const uint64_t A = base.a, W = base.b, C = base.c, BIAS = base.bias;
  d.step = [=](int s, int sample, Emit& e) {
    for (int w = 0; w < 4; ++w) {
      if (s < K / 32) {
        const uint64_t k0 = uint64_t(s) * 32;
        for (int rep = 0; rep < 4; ++rep) {  // 512 chunks of 16 B per operand, 128 threads
          auto chunk = [&](int l) { return rep * 128 + w * 32 + l; };
          e.global(
              kA, false, lanes_of([&](int l) {
                return LaneAddr{A + (uint64_t(chunk(l) / 4) * K + k0 + (chunk(l) % 4) * 8) * 2, 16};
              }));
          e.global(
              kB, false, lanes_of([&](int l) {
                return LaneAddr{W + (uint64_t(chunk(l) / 4) * K + k0 + (chunk(l) % 4) * 8) * 2, 16};
              }));
        }
      } else {
        const int wm = (w / 2) * 64, wn = (w % 2) * 64;
        for (int mi = 0; mi < 4; ++mi)
          for (int ni = 0; ni < 8; ++ni)
            for (int half = 0; half < 2; ++half) {
              if (bias_relu)
                e.global(kBias, false, lanes_of([&](int l) {
                           return LaneAddr{BIAS + f4(wn + ni * 8 + (l % 4) * 2), 8};
                         }));
              e.global(kC, true, lanes_of([&](int l) {
                         const int row = wm + mi * 16 + half * 8 + l / 4;
                         return LaneAddr{
                             row % sample ? ~uint64_t{0}
                                          : C + f4(uint64_t(row) * N + wn + ni * 8 + (l % 4) * 2),
                             8};
                       }));
            }
      }
    }
  };
  return d;
}

// The elementwise passes: 256 threads, one float4 each; bias indexed by column.
Desc elementwise_desc(const std::string& kernel, int rows, int cols, const Bases& base) {
  if (rows <= 0 || cols <= 0 || cols % 4 || (uint64_t(rows) * cols) % 1024)
    throw std::invalid_argument(kernel + ": rows·cols must be a multiple of 1024, cols of 4");
  Desc d;
  d.name = kernel;
  d.elementwise = true;
  d.elems_per_block = 1024;
  d.grid_x = static_cast<int>(uint64_t(rows) * cols / 1024), d.grid_y = 1;
  d.threads = 256, d.registers = 22, d.steps = 1;
  const bool bias = kernel != "relu";
  const uint64_t IN = base.a, OUT = base.c, BIAS = base.bias;
  d.step = [=](int s, int sample, Emit& e) {
    (void)sample;
    if (s > 0) return;
    for (int w = 0; w < 8; ++w) {
      e.global(kA, false, lanes_of([&](int l) {
                 return LaneAddr{IN + f4(uint64_t(w * 32 + l) * 4), 16};
               }));
      if (bias)
        e.global(kBias, false, lanes_of([&](int l) {
                   return LaneAddr{BIAS + f4(uint64_t(w * 32 + l) * 4 % cols), 16};
                 }));
      e.global(kC, true, lanes_of([&](int l) {
                 return LaneAddr{OUT + f4(uint64_t(w * 32 + l) * 4), 16};
               }));
    }
  };
  return d;
}

// [SECTION] L1

// NVIDIA hashes line addresses onto cache sets and does not publish how; with plain modulo
// indexing the power-of-two row strides of a GEMM would alias into a few sets and miss for no
// reason the hardware has. The twin scrambles line numbers with a bijective mixer (xor-shifts and
// odd multiplies modulo 2^57, so every bit of the line reaches the set bits) before they reach a
// cache: sets fill evenly, and distinct lines stay distinct.
uint64_t hashed_line(uint64_t line) {
  constexpr uint64_t kMask = (uint64_t{1} << 57) - 1;
  uint64_t x = line & kMask;
  x ^= x >> 23;
  x = (x * 0x9E3779B97F4A7C15ull) & kMask;
  x ^= x >> 29;
  x = (x * 0xBF58476D1CE4E5B9ull) & kMask;
  x ^= x >> 31;
  return x;
}
uint64_t hashed_addr(uint64_t addr) {
  return (hashed_line(addr / 128) << 7) | (addr & 127);
}

// The unified L1/shared array is 256 KiB; the carve-out is the smallest of the sm_90 choices that
// holds the resident blocks' shared memory.
uint64_t l1_bytes_per_sm(const Desc& d, int resident_per_sm) {
  const uint64_t need = d.smem_bytes == 0 ? 0 : uint64_t(resident_per_sm) * (d.smem_bytes + 1024);
  const uint64_t carveouts[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  uint64_t carve = 228;
  for (uint64_t c : carveouts)
    if (c * 1024 >= need) {
      carve = c;
      break;
    }
  return (256 - carve) * 1024;
}

// A sectored LRU cache of 128-byte lines, for one block's share of an L1.
class SectorL1 {
 public:
  explicit SectorL1(uint64_t bytes) : m_ways(4) {
    m_sets = std::max<uint64_t>(1, bytes / 128 / m_ways);
    m_tag.assign(m_sets * m_ways, ~uint64_t{0});
    m_valid.assign(m_sets * m_ways, 0);
    m_stamp.assign(m_sets * m_ways, 0);
  }
  // True on a hit; a miss installs the sector.
  bool load(uint64_t sector_addr) {
    const uint64_t line = hashed_line(sector_addr / 128);
    const uint32_t bit = 1u << ((sector_addr / kSector) % 4);
    const uint64_t set = line % m_sets, base = set * m_ways;
    uint64_t victim = base;
    for (uint64_t w = base; w < base + m_ways; ++w) {
      if (m_tag[w] == line) {
        m_stamp[w] = ++m_clock;
        const bool hit = m_valid[w] & bit;
        m_valid[w] |= bit;
        return hit;
      }
      if (m_stamp[w] < m_stamp[victim]) victim = w;
    }
    m_tag[victim] = line;
    m_valid[victim] = bit;
    m_stamp[victim] = ++m_clock;
    return false;
  }

 private:
  uint64_t m_ways, m_sets;
  std::vector<uint64_t> m_tag;
  std::vector<uint32_t> m_valid;
  std::vector<uint64_t> m_stamp;
  uint64_t m_clock = 0;
};

// What one representative block sends below its L1, step by step, and what it counted on the way.
struct BlockTrace {
  struct Req {
    uint64_t addr;  // sector address of the representative block
    int16_t tensor;
    bool write;
  };
  std::vector<std::vector<Req>> steps;  // [step] → L2 requests (bias loads kept for the SM filter)
  double load_sectors = 0, load_hits = 0, store_sectors = 0, load_requests = 0;
  double load_lines = 0, store_lines = 0;  // distinct 128-byte lines per instruction
  double sh_ld_wave = 0, sh_st_wave = 0, sh_ld_ideal = 0, sh_st_ideal = 0, sh_ld = 0, sh_st = 0;
};

class BlockRecorder final : public Emit {
 public:
  BlockRecorder(BlockTrace& t, SectorL1& l1, bool count_shared)
      : m_t(t), m_l1(l1), m_shared(count_shared) {}
  void begin_step() { m_t.steps.emplace_back(); }
  void global(Tensor t, bool write, const Warp& w) override {
    std::vector<uint64_t> sectors;
    for (int l = 0; l < w.lanes; ++l) {
      const LaneAddr& a = w.lane[static_cast<size_t>(l)];
      if (a.addr == ~uint64_t{0}) continue;  // a lane left out by row sampling
      for (uint64_t s = a.addr / kSector; s <= (a.addr + a.bytes - 1) / kSector; ++s)
        sectors.push_back(s * kSector);
    }
    if (sectors.empty()) return;
    std::sort(sectors.begin(), sectors.end());
    sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
    // The data stage moves one 128-byte line a pass (a wavefront): sorted sectors, new line count.
    double lines = 0;
    for (size_t i = 0; i < sectors.size(); ++i)
      lines += (i == 0 || sectors[i] / kLine != sectors[i - 1] / kLine) ? 1 : 0;
    auto& out = m_t.steps.back();
    if (write) {
      m_t.store_lines += lines;
      m_t.store_sectors += static_cast<double>(sectors.size());
      for (uint64_t s : sectors) out.push_back({s, t, true});
      return;
    }
    m_t.load_requests += 1;
    m_t.load_lines += lines;
    m_t.load_sectors += static_cast<double>(sectors.size());
    for (uint64_t s : sectors) {
      if (t == kBias) {  // read-only and shared by every block of an SM: filtered per SM later
        out.push_back({s, t, false});
      } else if (m_l1.load(s)) {
        m_t.load_hits += 1;
      } else {
        out.push_back({s, t, false});
      }
    }
  }
  void shared(bool write, const Warp& w) override {
    if (!m_shared) return;
    std::vector<LaneAddr> lanes(w.lane.begin(), w.lane.begin() + w.lanes);
    const SharedCost c = shared_warp_cost(lanes);
    if (write) {
      m_t.sh_st += 1, m_t.sh_st_wave += c.wavefronts, m_t.sh_st_ideal += c.ideal;
    } else {
      m_t.sh_ld += 1, m_t.sh_ld_wave += c.wavefronts, m_t.sh_ld_ideal += c.ideal;
    }
  }

 private:
  BlockTrace& m_t;
  SectorL1& m_l1;
  bool m_shared;
};

BlockTrace trace_block(const Desc& d, uint64_t l1_bytes, int steps, int sample) {
  BlockTrace t;
  SectorL1 l1(l1_bytes);
  BlockRecorder rec(t, l1, true);
  for (int s = 0; s < steps; ++s) {
    rec.begin_step();
    d.step(s, sample, rec);
  }
  rec.begin_step();
  d.step(d.steps, sample, rec);  // the epilogue
  return t;
}

// [SECTION] L2 replay

// The output tile of the block launched `index`-th: launch order, or GroupedOrder<group>.
std::pair<int, int> tile_of(const Desc& d, int64_t index, int group) {
  const int gx = d.grid_x, gy = d.grid_y;
  int bx = static_cast<int>(index % gx), by = static_cast<int>(index / gx);
  if (group > 0) {
    const int64_t per_group = int64_t(group) * gx;
    const int first_row = static_cast<int>(index / per_group) * group;
    const int rows = std::min(group, gy - first_row);
    const int64_t in_group = index % per_group;
    bx = static_cast<int>(in_group / rows);
    by = first_row + static_cast<int>(in_group % rows);
  }
  return {bx, by};
}

}  // namespace

// [SECTION] Prediction

namespace {

// The description of twin `kernel` at M×N×K, its tensors 1 MiB-aligned one after another.
Desc kernel_desc(const std::string& kernel, int M, int N, int K) {
  Bases base;
  const uint64_t align = 1 << 20;
  auto round_up = [&](uint64_t v) { return (v + align - 1) / align * align; };
  base.a = 0;
  base.b = round_up(uint64_t(M) * K * 4);
  base.c = base.b + round_up(uint64_t(K) * N * 4);
  base.bias = base.c + round_up(uint64_t(M) * N * 4);

  Desc d;
  if (kernel.rfind("sgemm_0", 0) == 0) {
    d = sgemm_desc(kernel[7] - '0', M, N, K, base, kernel.find("bias_relu") != std::string::npos);
  } else if (kernel.rfind("hgemm_02", 0) == 0) {
    d = hgemm2_desc(M, N, K, base, kernel.find("bias_relu") != std::string::npos);
  } else {
    d = elementwise_desc(kernel, M, N, base);
  }
  return d;
}

// The slice: the smallest power of two that keeps the L2 replay under its budget, dividing K
// into whole serial steps and the L2 into whole sets (or --k-slice). Elementwise kernels are never
// sliced. Throws when the slice does not divide them.
int choose_k_slice(const std::string& kernel, const Desc& d, const GpuKernelOptions& o,
                   double per_block_l2, int64_t blocks, uint64_t l2_sets) {
  int s = 1;
  if (o.k_slice > 0) {
    s = o.k_slice;
  } else if (!d.elementwise) {
    // At most as many as the tile has rows (the epilogue samples rows within a tile), and at
    // least 32 serial steps left, so the L1's reuse along K is still seen.
    while (per_block_l2 * double(blocks) / s > o.max_l2_accesses && d.steps % (2 * s) == 0 &&
           l2_sets % (2 * s * std::max(1, o.l2_partitions)) == 0 && d.steps / (2 * s) >= 32 &&
           2 * s <= d.bm)
      s *= 2;
  }
  if (s < 1 || d.steps % s || l2_sets % s)
    throw std::invalid_argument(kernel + ": K slice 1/" + std::to_string(s) +
                                " must divide the serial steps and the L2's sets");
  return s;
}

// Exact per-block counts from the full-K block trace, times the `nb` blocks of the grid.
void add_block_counts(GpuKernelPrediction& p, const BlockTrace& full, double nb) {
  p.l1_load_sectors = full.load_sectors * nb;
  p.l1_load_requests = full.load_requests * nb;
  p.l1_load_wavefronts = full.load_lines * nb;
  p.l1_store_wavefronts = full.store_lines * nb;
  p.l1_store_sectors = full.store_sectors * nb;
  p.l2_write_sectors = p.l1_store_sectors;
  p.shared_ld_wavefronts = full.sh_ld_wave * nb;
  p.shared_st_wavefronts = full.sh_st_wave * nb;
  p.shared_ld_conflicts = (full.sh_ld_wave - full.sh_ld_ideal) * nb;
  p.shared_st_conflicts = (full.sh_st_wave - full.sh_st_ideal) * nb;
  p.shared_ld_instructions = full.sh_ld * nb;
  p.shared_st_instructions = full.sh_st * nb;
}

// How far block (bx, by)'s tile of `tensor` lies from the representative block's, in bytes.
uint64_t block_shift(const Desc& d, int16_t tensor, int bx, int by, int N, int K, bool hgemm) {
  if (d.elementwise) {
    const uint64_t first = uint64_t(bx) * d.elems_per_block;  // the block's first element
    if (tensor == kBias) return f4(first % uint64_t(N));
    return f4(first);
  }
  const int row_tile = d.x_is_rows ? bx : by, col_tile = d.x_is_rows ? by : bx;
  const uint64_t r0 = uint64_t(row_tile) * d.bm, c0 = uint64_t(col_tile) * d.bn;
  switch (tensor) {
    case kA:
      return hgemm ? r0 * K * 2 : f4(r0 * K);
    case kB:
      return hgemm ? c0 * K * 2 : f4(c0);
    case kC:
      return f4(r0 * N + c0);
    default:
      return f4(c0);
  }
}

// What the L2 replay runs: the slice's block trace over the grid's `blocks` blocks, `resident`
// of them at once on the machine's SMs.
struct ReplayLaunch {
  const Desc& d;
  const BlockTrace& bt;
  int N, K;
  bool hgemm;
  int64_t blocks, resident;
};

// Replays every block's L2 requests through `l2` in the order the resident slots run them;
// returns the bias loads that hit in their SM's L1 (which never reach `l2`).
double replay_l2(PartitionedL2& l2, const ReplayLaunch& r, const Machine& m,
                 const GpuKernelOptions& o) {
  const Desc& d = r.d;
  const BlockTrace& bt = r.bt;
  const int64_t blocks = r.blocks, resident = r.resident;
  // Per-SM filter of the shared read-only vector (the bias): a sector any block of the SM loaded
  // before is an L1 hit.
  std::vector<std::vector<uint64_t>> bias_seen(static_cast<size_t>(m.cores));
  double bias_hits = 0;
  const int replay_steps = static_cast<int>(bt.steps.size());
  // Groups of `cores` blocks in launch order, one per residency slot: group g runs in slot
  // g mod P of every SM and starts at (g div P) × S + (g mod P) × offset steps; at each step every
  // running group replays its blocks' current step, groups in order. With offset 0 the groups of
  // a wave start together: the lockstep waves.
  const int64_t per_slot = std::max<int64_t>(1, m.cores);
  const int64_t slots = std::max<int64_t>(1, resident / per_slot);
  const int64_t offset = std::clamp<int64_t>(
      std::llround(std::clamp(o.slot_offset, 0.0, 1.0) * replay_steps), 0, replay_steps);
  const int64_t groups = (blocks + per_slot - 1) / per_slot;
  const auto group_start = [&](int64_t g) {
    return (g / slots) * int64_t(replay_steps) + (g % slots) * offset;
  };
  // The L2 partition each SM (a slot's j-th block) is near.
  std::vector<int> near(static_cast<size_t>(m.cores));
  for (int j = 0; j < m.cores; ++j)
    near[size_t(j)] = near_partition_of_block(j, m.cores, std::max(1, o.l2_partitions));
  const int64_t end = group_start(groups - 1) + replay_steps;
  int64_t first_group = 0;
  for (int64_t t = 0; t < end; ++t) {
    while (first_group < groups && group_start(first_group) + replay_steps <= t) ++first_group;
    for (int64_t g = first_group; g < groups && group_start(g) <= t; ++g) {
      const int st = static_cast<int>(t - group_start(g));
      if (st >= replay_steps) continue;
      const int64_t w0 = g * per_slot, w1 = std::min(blocks, w0 + per_slot);
      for (int64_t b = w0; b < w1; ++b) {
        auto [bx, by] = tile_of(d, b, o.group_rows);
        const size_t sm = static_cast<size_t>((b % resident) % m.cores);
        for (const BlockTrace::Req& q : bt.steps[static_cast<size_t>(st)]) {
          const uint64_t addr = q.addr + block_shift(d, q.tensor, bx, by, r.N, r.K, r.hgemm);
          if (q.tensor == kBias && !q.write) {
            auto& seen = bias_seen[sm];
            if (std::find(seen.begin(), seen.end(), addr) != seen.end()) {
              bias_hits += 1;
              continue;
            }
            seen.push_back(addr);
          }
          if (q.write)
            l2.write(hashed_addr(addr), near[sm]);
          else
            l2.read(hashed_addr(addr), near[sm], q.tensor);
        }
      }
    }
  }
  return bias_hits;
}

}  // namespace

std::vector<std::string> gpu_twin_kernels() {
  return {"sgemm_01",           "sgemm_02", "sgemm_03", "sgemm_04",           "sgemm_05",
          "sgemm_06",           "sgemm_07", "sgemm_08", "sgemm_08_bias_relu", "hgemm_02",
          "hgemm_02_bias_relu", "bias_add", "relu",     "bias_relu_fused"};
}

bool has_gpu_twin(const std::string& kernel) {
  const auto k = gpu_twin_kernels();
  return std::find(k.begin(), k.end(), kernel) != k.end();
}

GpuKernelPrediction predict_gpu_kernel(const std::string& kernel, int M, int N, int K,
                                       const Machine& m, const GpuKernelOptions& o) {
  if (!has_gpu_twin(kernel)) throw std::invalid_argument("no trace description for " + kernel);
  if (M <= 0 || N <= 0 || K <= 0) throw std::invalid_argument(kernel + ": sizes must be positive");
  const memory::HierarchyConfig hc = m.hierarchy();
  const memory::CacheConfig* l2cfg = nullptr;
  for (const memory::CacheConfig& c : hc.levels)
    if (c.shared_by > 1) l2cfg = &c;
  if (!l2cfg || m.cores <= 0)
    throw std::invalid_argument("machine " + m.name + " is not a GPU with a shared L2");

  const Desc d = kernel_desc(kernel, M, N, K);

  GpuKernelPrediction p;
  p.twin = d.name;
  // Blocks resident on one SM, by the occupancy calculator's rules (equal to ncu's: occupancy.h).
  const Occupancy occ = occupancy(m, {d.threads, d.registers, d.smem_bytes});
  if (!occ.error.empty()) throw std::invalid_argument(kernel + ": " + occ.error);
  p.blocks_per_sm = static_cast<int>(occ.blocks_per_sm);
  if (o.max_blocks_per_sm > 0) p.blocks_per_sm = std::min(p.blocks_per_sm, o.max_blocks_per_sm);
  p.resident_blocks = int64_t(p.blocks_per_sm) * m.cores;
  const uint64_t l1_sm = l1_bytes_per_sm(d, p.blocks_per_sm);
  p.l1_bytes_per_block = double(l1_sm) / p.blocks_per_sm;
  const int64_t blocks = int64_t(d.grid_x) * d.grid_y;

  const BlockTrace full = trace_block(d, static_cast<uint64_t>(p.l1_bytes_per_block), d.steps, 1);
  double per_block_l2 = 0;
  for (const auto& s : full.steps) per_block_l2 += static_cast<double>(s.size());
  const int s = choose_k_slice(kernel, d, o, per_block_l2, blocks, l2cfg->sets());
  p.k_slice = s;
  p.method = s == 1 ? "full trace"
                    : "K slice 1/" + std::to_string(s) + " (first " + std::to_string(d.steps / s) +
                          " of " + std::to_string(d.steps) + " steps), every " + std::to_string(s) +
                          "th C row, L2 at 1/" + std::to_string(s) + " of its sets; counts ×" +
                          std::to_string(s);

  const double nb = static_cast<double>(blocks);
  add_block_counts(p, full, nb);
  p.threads = d.threads, p.registers = d.registers, p.smem_bytes = d.smem_bytes;
  p.blocks = blocks;
  const bool tensor = kernel.rfind("hgemm", 0) == 0;
  if (!d.elementwise)
    (tensor ? p.tensor_flops : p.fp32_fmas) = (tensor ? 2.0 : 1.0) * double(M) * N * K;
  const double warps = double((d.threads + 31) / 32);
  if (full.load_requests > 0) {
    p.loads_per_warp_per_step = full.load_requests / (double(d.steps) * warps);
    p.bytes_per_load = full.load_sectors * kSector / full.load_requests;
  }

  // The L2 replay of the slice.
  const BlockTrace sliced =
      s == 1 ? BlockTrace{}
             : trace_block(d, static_cast<uint64_t>(p.l1_bytes_per_block), d.steps / s, s);
  const BlockTrace& bt = s == 1 ? full : sliced;
  PartitionedL2Config pc;
  pc.partitions = std::max(1, o.l2_partitions);
  pc.partition = *l2cfg;
  pc.partition.size_bytes /= uint64_t(s) * uint64_t(pc.partitions);
  pc.copy_far_hits = pc.copy_dram_fills = o.l2_near_copies;
  PartitionedL2 l2(pc);
  const double bias_hits =
      replay_l2(l2, ReplayLaunch{d, bt, N, K, tensor, blocks, p.resident_blocks}, m, o);
  const double scale = static_cast<double>(s);
  p.l2_read_sectors = static_cast<double>(l2.reads) * scale;
  // A, B and the bias are only read, C only written: read hits are the hits of the first three.
  p.l2_read_hit_sectors = double(l2.read_hits_by_tensor[kA] + l2.read_hits_by_tensor[kB] +
                                 l2.read_hits_by_tensor[kBias]) *
                          scale;
  p.dram_read_bytes = static_cast<double>(l2.dram_read_bytes) * scale;
  p.dram_write_bytes = static_cast<double>(l2.dram_write_bytes) * scale;
  // Bias hits happened in every slice step the same way, so they scale like the replay.
  p.l1_load_hit_sectors = full.load_hits * nb + bias_hits * (d.elementwise ? 1.0 : scale);
  return p;
}

}  // namespace tilescope::predict
