// The tolerance a real run of a generated kernel must meet against the interpreter before it is
// timed: one number for the workbench's "run on this CPU" and the autotune CPU sweep. A header of
// its own so that autotune.cpp need not include workbench.h, which includes autotune.h.
#pragma once

namespace tilescope::core {

// Below these the verification tolerance is met (fp32 sums in a different order differ).
inline constexpr double kVerifyTolerance = 1e-4;

}  // namespace tilescope::core
