// Private to the transform*.cpp files: the refusal every primitive throws, the helpers they share,
// and the primitives the step table (transform.cpp) dispatches to. Not part of the public API.
#pragma once

#include "sim/schedule/kernel.h"
#include "sim/schedule/steps.h"
#include "sim/schedule/transform.h"

#include <cstdint>
#include <string>
#include <string_view>
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
// `step` names the step in the refusal: "tile: kernel matmul0 has no loop named 'q'; ...".
int need_loop(const Kernel& k, std::string_view step, const std::string& name);
std::string dims_text(const std::vector<int64_t>& e);
std::string count_text(int64_t n);
std::string working_set_text(const Kernel& k, int at, const Target& t);
void check_or_refuse(const Kernel& k, const Target& t, const std::string& prefix);
// "unroll takes one loop name; got 2 arguments".
[[noreturn]] void refuse_arg_count(std::string_view step, size_t args, std::string_view args_text);

// [SECTION] Step text (transform_text.cpp)

// Refusals for a value word a step does not know; a typed step built in code with a value the
// step cannot take is refused with the same text.
[[noreturn]] void refuse_gpu_dim(std::string_view word);
[[noreturn]] void refuse_mem_level(std::string_view word);
[[noreturn]] void refuse_layout(std::string_view word);

// Text → typed step, one per row of the step table: the values read from the words (a factor as
// a number, a level as a MemLevel), refusing a word that is not one. The argument count and the
// options are checked against the table before.
StepSpec parse_kernel(const TransformStep& s);
StepSpec parse_fuse(const TransformStep& s);
StepSpec parse_compute_at(const TransformStep& s);
StepSpec parse_split(const TransformStep& s);
StepSpec parse_tile(const TransformStep& s);
StepSpec parse_reorder(const TransformStep& s);
StepSpec parse_unroll(const TransformStep& s);
StepSpec parse_vectorize(const TransformStep& s);
StepSpec parse_parallel(const TransformStep& s);
StepSpec parse_bind(const TransformStep& s);
StepSpec parse_stage(const TransformStep& s);
StepSpec parse_block_order(const TransformStep& s);
StepSpec parse_layout(const TransformStep& s);
StepSpec parse_pad(const TransformStep& s);
StepSpec parse_im2col(const TransformStep& s);
StepSpec parse_online_softmax(const TransformStep& s);
StepSpec parse_split_k(const TransformStep& s);

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

// Every index list in `e`: each load's, and the expression of each Index node (a causal mask's
// column minus row), so a substitution of axes or loops reaches both.
template <class F>
void visit_indices(VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load || e.kind == VExpr::Kind::Index) f(e.index);
  for (auto& a : e.args) visit_indices(a, f);
}

// [SECTION] Loop primitives (transform_loops.cpp)

// `step` is the name the refusals and explanations use: split and tile share do_split, bind and
// the loop-kind steps share do_kind.
std::string do_split(Kernel& k, std::string_view step, const std::string& name, int64_t f);
std::string do_reorder(Kernel& k, const ReorderStep& s, const Target& t);
std::string do_kind(Kernel& k, std::string_view step, const std::string& loop, LoopKind kind,
                    const Target& t);
std::string do_bind(Kernel& k, const BindStep& s, const Target& t);

// [SECTION] Fusion (transform_fusion.cpp)

int find_kernel_with_op(const Program& p, const std::string& op, const std::string& step);
// Drops tensor slots no phase or computed definition references any more.
void drop_unused_tensors(Kernel& k);
std::string do_fuse(Program& p, const FuseStep& s, const Target& t);
std::string do_compute_at(Program& p, const ComputeAtStep& s, const Target& t);
std::string do_im2col(Program& p, const Im2colStep& s, const Target& t);
std::string do_online_softmax(Program& p, const OnlineSoftmaxStep& s, const Target& t);

// [SECTION] Reductions split across kernels (transform_split_k.cpp)

std::string do_split_k(Program& p, const SplitKStep& s, const Target& t);

// [SECTION] Memory primitives (transform_memory.cpp)

std::string do_stage(Kernel& k, const StageStep& s, const Target& t);
std::string do_block_order(Kernel& k, const BlockOrderStep& s, const Target& t);
std::string do_layout(Program& p, const LayoutStep& s, const Target& t);
std::string do_pad(Program& p, const PadStep& s, const Target& t);

}  // namespace tilescope::schedule::detail
