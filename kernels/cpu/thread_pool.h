// A persistent pool of worker threads for the threaded kernel versions: a timed call must not pay
// for creating and joining threads (tens of microseconds each), which a library such as Eigen
// (OpenMP) does not pay either.
#pragma once

#include <functional>

namespace tilescope::kernels {

// Runs task(i) for every i in [0, count) on up to `threads` threads — the calling thread and
// threads − 1 pool workers, created on first use and kept for later calls — and returns when every
// task has finished. Tasks are claimed one at a time, so uneven tasks balance. Calls from several
// threads at once take turns. A task must not throw, nor call parallel_tasks itself (it would wait
// for its own turn).
void parallel_tasks(int threads, int count, const std::function<void(int task)>& task);

}  // namespace tilescope::kernels
