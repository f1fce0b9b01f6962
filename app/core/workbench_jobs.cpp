// The hold that asks the learner before a long job, or refuses one that would not fit: the job
// sized by the pipeline (pipeline::size_walk) before it starts (workbench.h's [SECTION] Sizing).
#include "app/core/workbench.h"

#include "app/core/format.h"
#include "sim/io/format.h"
#include "sim/predict/work_size.h"

#include <cmath>
#include <cstdio>

namespace tilescope::core {

namespace {

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f trillion", n / 1e12);
  else if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f billion", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f million", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

}  // namespace

std::optional<HeldJob> hold_for(const pipeline::WalkSize& s, const std::string& what,
                                bool anyway) {
  HeldJob h;
  if (!s.fits()) {
    h.refused = true;
    h.message = what + " would need about " + io::format_bytes(double(s.bytes)) +
                " of memory, more than the " + io::format_bytes(double(s.budget.bytes)) +
                " available (" + s.budget.source +
                "). Make the model smaller: the same schedule shows the same pattern at a "
                "smaller size.";
    return h;
  }
  if (anyway || s.seconds <= kLongJobSeconds) return std::nullopt;
  h.message = what + " makes about " + count_text(s.accesses) + " accesses (" + s.formula +
              "): about " + duration_text(s.seconds) +
              " at this simulator's typical rate. Run it anyway, or make the model smaller "
              "(the same schedule shows the same pattern at a smaller size).";
  return h;
}

}  // namespace tilescope::core
