// The workbench's autotune: which loops of its current kernel are swept, the keys its grids are
// cached by, and the `autotune` script command that starts the sweeps of autotune.h as background
// jobs. Apart from autotune.h because it needs the Workbench, and the Workbench holds an
// AutotuneState: autotune.h includes nothing of the workbench's.
//
// Pure C++ (no ImGui): tests drive it through script commands.
#pragma once

#include "app/core/autotune.h"
#include "app/core/workbench.h"

#include <string>

namespace tilescope::core {

// The loops the current kernel would be swept over (error set when there are none).
AutotuneLoops autotune_loops(const Workbench& wb);
std::string autotune_sim_key(const Workbench& wb);
std::string autotune_cpu_key(const Workbench& wb);
const AutotuneGrid* autotune_sim_result(const Workbench& wb);
const AutotuneGrid* autotune_cpu_result(const Workbench& wb);

// Script command `autotune sim | cpu | loops A B | loops auto | show | hide`; "" or why not.
std::string autotune_command(Workbench& wb, const std::string& args);

}  // namespace tilescope::core
