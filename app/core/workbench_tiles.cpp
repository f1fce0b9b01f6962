// The workbench's Tiles jobs and playback: the loop-nest walk and the GPU wave as jobs, cached per
// schedule, and the animation's play, pause, seek and tick.
#include "app/core/workbench.h"

#include <algorithm>
#include <cmath>

namespace tilescope::core {

std::string workbench_record_tiles(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "tiles: there is no kernel";
  const std::string key = wb.tiles_key_now();
  if (wb.tiles_key == key && (wb.tiles || !wb.tiles_error.empty())) return {};
  if (wb.tiles_job.running() && wb.tiles_job.key() == key) return {};
  // On a CPU machine the walk also runs through its hierarchy: the counters over time and the
  // cache's sets and ways at every frame.
  std::optional<predict::Machine> machine;
  if (wb.machine && wb.machine->kind != "gpu") machine = *wb.machine;
  const pipeline::WalkSize size =
      pipeline::size_walk(pipeline::Walk::Tiles, *k, machine ? &*machine : nullptr);
  if (std::optional<HeldJob> held = hold_for(size, "Walking the loop nest of " + k->name, anyway)) {
    wb.tiles_held[key] = *held;
    return {};
  }
  wb.tiles_held.erase(key);
  wb.tiles.reset();
  wb.tiles_error.clear();
  wb.tiles_key = key;
  wb.tiles_frame = 0;
  wb.tiles_job.start(key, [kernel = *k, machine](JobProgress& p) {
    return record_tiles(kernel, p, machine ? &*machine : nullptr);
  });
  return {};
}

size_t Workbench::tiles_frame_count() const {
  if (tiles_gpu) return gpu_tiles ? gpu_tiles->frames.size() : 0;
  return tiles ? tiles->frames.size() : 0;
}

std::string workbench_record_gpu_tiles(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "tiles: there is no kernel";
  if (!wb.machine) return "tiles: no machine is loaded";
  const std::string key = wb.gpu_tiles_key_now();
  if (wb.gpu_tiles_key == key && (wb.gpu_tiles || !wb.gpu_tiles_error.empty())) return {};
  if (wb.gpu_tiles_job.running() && wb.gpu_tiles_job.key() == key) return {};
  // The walk up to the picked wave is at most the whole GPU trace: sized as the loop-nest walk.
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Tiles, *k, nullptr);
  if (std::optional<HeldJob> held = hold_for(size, "Walking " + k->name + " on the GPU", anyway)) {
    wb.tiles_held[key] = *held;
    return {};
  }
  wb.tiles_held.erase(key);
  wb.gpu_tiles.reset();
  wb.gpu_tiles_error.clear();
  wb.gpu_tiles_key = key;
  wb.tiles_frame = 0;
  wb.gpu_tiles_job.start(key, [kernel = *k, machine = *wb.machine, block = wb.tiles_block,
                               warp = wb.tiles_warp](JobProgress& p) {
    return record_gpu_tiles(kernel, machine, block, warp, p);
  });
  return {};
}

std::string workbench_tiles_control(Workbench& wb, const std::string& verb, double value) {
  const double last = std::max(0.0, double(wb.tiles_frame_count()) - 1);
  if (verb == "gpu") {
    wb.tiles_gpu = value != 0;
    wb.tiles_playing = false;
    wb.tiles_frame = 0;
    return {};
  }
  if (verb == "block" || verb == "warp") {
    // The range is checked by the recording (which says what it is); a new pick starts the
    // wave from its first frame.
    if (value < 0 || value != std::floor(value) || value > 1e9)
      return "tiles " + verb + ": expected a whole number >= 0";
    if (verb == "block") {
      wb.tiles_block = int64_t(value);
      // Keep the warp when the new block has it (every block has the same threads).
    } else {
      wb.tiles_warp = int(value);
    }
    wb.tiles_gpu = true;
    wb.tiles_playing = false;
    wb.tiles_frame = 0;
    return {};
  }
  if (verb == "play") {
    wb.tiles_playing = true;
    wb.tiles_last_time = -1;
    if (wb.tiles_frame >= last) wb.tiles_frame = 0;
  } else if (verb == "pause") {
    wb.tiles_playing = false;
  } else if (verb == "step") {
    wb.tiles_playing = false;
    wb.tiles_frame = std::min(last, std::floor(wb.tiles_frame) + 1);
  } else if (verb == "back") {
    wb.tiles_playing = false;
    wb.tiles_frame = std::max(0.0, std::ceil(wb.tiles_frame) - 1);
  } else if (verb == "seek") {
    wb.tiles_frame = std::clamp(value, 0.0, last);
  } else if (verb == "speed") {
    if (value <= 0 || value > 1000) return "tiles speed: expected 0 < frames per second <= 1000";
    wb.tiles_speed = value;
  } else {
    return "tiles: expected play, pause, step, back, seek N, speed X, gpu on|off, block N or "
           "warp N, got '" + verb + "'";
  }
  return {};
}

void workbench_tick(Workbench& wb, double now) {
  if (!wb.tiles_playing || wb.tiles_frame_count() == 0) {
    wb.tiles_last_time = now;
    return;
  }
  if (wb.tiles_last_time >= 0) wb.tiles_frame += (now - wb.tiles_last_time) * wb.tiles_speed;
  wb.tiles_last_time = now;
  const double last = double(wb.tiles_frame_count() - 1);
  if (wb.tiles_frame >= last) {
    wb.tiles_frame = last;
    wb.tiles_playing = false;
  }
}

}  // namespace tilescope::core
