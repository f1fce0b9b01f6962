// Private to the transform*.cpp files: the refusal every primitive throws, the helpers they share,
// and the primitives the step table (transform.cpp) dispatches to. Not part of the public API.
#pragma once

#include "sim/schedule/kernel.h"
#include "sim/schedule/transform.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::schedule::detail {

// [SECTION] Helpers (transform.cpp)

// A precondition that does not hold: the learner-facing reason. A ScheduleError, so a step
// function called through step_table() outside apply_step throws the public error type.
struct Refused : ScheduleError {
  using ScheduleError::ScheduleError;
};
[[noreturn]] inline void refuse(const std::string& why) {
  throw Refused(why);
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
int64_t parse_int(const TransformStep& s, const std::string& text, const std::string& what);
int need_loop(const Kernel& k, const TransformStep& s, const std::string& name);
std::string dims_text(const std::vector<int64_t>& e);
std::string count_text(int64_t n);
std::string working_set_text(const Kernel& k, int at, const Target& t);
void check_or_refuse(const Kernel& k, const Target& t, const std::string& prefix);

// Loads in `e` of tensor slot `t`.
template <class F>
void visit_loads(VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (auto& a : e.args) visit_loads(a, f);
}
template <class F>
void visit_loads(const VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (const auto& a : e.args) visit_loads(a, f);
}

// [SECTION] Loop primitives (transform_loops.cpp)

std::string do_split(Kernel& k, const TransformStep& s, const std::string& name, int64_t f);
std::string do_reorder(Kernel& k, const TransformStep& s, const Target& t);
std::string do_kind(Kernel& k, const TransformStep& s, LoopKind kind, const Target& t);
std::string do_bind(Kernel& k, const TransformStep& s, const Target& t);

// [SECTION] Fusion (transform_fusion.cpp)

int find_kernel_with_op(const Program& p, const std::string& op, const std::string& step);
std::string do_fuse(Program& p, const TransformStep& s, const Target& t);
std::string do_compute_at(Program& p, const TransformStep& s, const Target& t);
std::string do_im2col(Program& p, const TransformStep& s, const Target& t);

// [SECTION] Memory primitives (transform_memory.cpp)

std::string do_stage(Kernel& k, const TransformStep& s, const Target& t);
std::string do_block_order(Kernel& k, const TransformStep& s, const Target& t);
std::string do_layout(Program& p, const TransformStep& s, const Target& t);
std::string do_pad(Program& p, const TransformStep& s, const Target& t);

}  // namespace tilescope::schedule::detail
