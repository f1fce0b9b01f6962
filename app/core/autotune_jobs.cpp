// The workbench's autotune: the loops of its current kernel, the cache keys and cached grids, and
// the `autotune` script command that starts the sweeps (autotune.h) as background jobs.
#include "app/core/autotune_jobs.h"

#include <sstream>

namespace tilescope::core {

AutotuneLoops autotune_loops(const Workbench& wb) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) {
    AutotuneLoops r;
    r.error = "autotune: there is no kernel to sweep";
    return r;
  }
  return choose_autotune_loops(*k, wb.autotune.want_a, wb.autotune.want_b);
}

std::string autotune_cpu_key(const Workbench& wb) {
  const AutotuneLoops l = autotune_loops(wb);
  return wb.schedule_key() + "\n~" + l.a + "," + l.b;
}

std::string autotune_sim_key(const Workbench& wb) {
  return autotune_cpu_key(wb) + "\n@" + wb.machine_name;
}

const AutotuneGrid* autotune_sim_result(const Workbench& wb) {
  auto it = wb.autotune.sim_cache.find(autotune_sim_key(wb));
  return it == wb.autotune.sim_cache.end() ? nullptr : &it->second;
}

const AutotuneGrid* autotune_cpu_result(const Workbench& wb) {
  auto it = wb.autotune.cpu_cache.find(autotune_cpu_key(wb));
  return it == wb.autotune.cpu_cache.end() ? nullptr : &it->second;
}

namespace {

std::string start_sim(Workbench& wb) {
  if (!wb.program() || !wb.kernel()) return "autotune sim: there is no kernel to sweep";
  const AutotuneLoops loops = autotune_loops(wb);
  if (!loops.error.empty()) return loops.error;
  if (!wb.machine) {
    if (std::string e = workbench_set_machine(wb, wb.machine_name); !e.empty()) return e;
  }
  AutotuneState& s = wb.autotune;
  const std::string key = autotune_sim_key(wb);
  if (s.sim_cache.count(key) || (s.sim_job.running() && s.sim_job.key() == key)) return {};
  s.sim_errors.erase(key);
  const PredictionMachine pm = autotune_prediction_machine(wb.machine_name, *wb.machine);
  s.sim_job.start(key, [base = *wb.program(), loops, pm](JobProgress& p) {
    AutotuneGrid g = autotune_sweep_simulator(base, loops, pm.machine, p);
    if (!pm.note.empty()) g.notes.insert(g.notes.begin(), pm.note);
    return g;
  });
  return {};
}

std::string start_cpu(Workbench& wb) {
  if (!wb.program() || !wb.kernel()) return "autotune cpu: there is no kernel to sweep";
  const AutotuneLoops loops = autotune_loops(wb);
  if (!loops.error.empty()) return loops.error;
  AutotuneState& s = wb.autotune;
  const std::string key = autotune_cpu_key(wb);
  if (s.cpu_cache.count(key) || (s.cpu_job.running() && s.cpu_job.key() == key)) return {};
  s.cpu_errors.erase(key);
  s.cpu_job.start(key, [base = *wb.program(), loops](JobProgress& p) {
    return autotune_sweep_cpu(base, loops, p, kAutotuneCpuPerAxis);
  });
  return {};
}

}  // namespace

std::string autotune_command(Workbench& wb, const std::string& args) {
  std::istringstream in(args);
  std::string verb, a, b, extra;
  in >> verb >> a >> b >> extra;
  AutotuneState& s = wb.autotune;
  if (verb == "show" || verb == "hide") {
    if (!a.empty()) return "autotune " + verb + ": takes no arguments";
    s.show = verb == "show";
    return {};
  }
  if (verb == "sim" || verb == "cpu") {
    if (!a.empty()) return "autotune " + verb + ": takes no arguments";
    s.show = true;
    return verb == "sim" ? start_sim(wb) : start_cpu(wb);
  }
  if (verb == "loops") {
    if (a == "auto" && b.empty()) {
      s.want_a.clear();
      s.want_b.clear();
      return {};
    }
    if (a.empty() || b.empty() || !extra.empty())
      return "autotune loops: expected two loop names (e.g. autotune loops i j) or auto";
    const schedule::Kernel* k = wb.kernel();
    if (!k) return "autotune loops: there is no kernel";
    const AutotuneLoops l = choose_autotune_loops(*k, a, b);
    if (!l.error.empty()) return l.error;
    s.want_a = a;
    s.want_b = b;
    s.show = true;
    return {};
  }
  return "autotune: expected sim, cpu, loops A B, loops auto, show or hide, got '" + verb + "'";
}

}  // namespace tilescope::core
