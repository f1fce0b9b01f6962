// The check language's function table (issue #27: tables instead of chains): every row carries a
// group, an example, a help line and the function that evaluates it; the example is a call of that
// function with an accepted number of arguments, and it evaluates in a lesson that defines the
// names the examples use (so the reference `tilescope-cli lesson functions` prints shows calls that
// work); the reference names every function.
#include "sim/lesson/check_functions.h"
#include "sim/lesson/check_language.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace tilescope::lesson;

namespace {

// The names the table's examples use: model m (ops matmul0, add0, relu0; tensors x, W, b), steps
// plan (split K, mapped to the GPU, x staged in shared memory), plan_t (mapped without the
// split), bad (a refused split); model quiz (the seed's quiz CNN, assets/models/cnn.model: conv0,
// relu1, maxpool2, flatten3, linear4), onto which the trace functions map a recorded H200 trace of
// the same network; machines by preset name.
const char* kLesson = R"(---
title: functions
level: beginner
minutes: 1
---
# functions

```model id=m
x: [64, 256]
W: [128, 256] weight
b: [128] weight
y = relu(x @ W.T + b)
```

```steps id=plan model=m
fuse(matmul0, add0, relu0)
split_k(k, 2)
bind(k.p, block.z)
tile(i, 16)
tile(j, 16)
tile(k, 32)
reorder(i.o, j.o, k.o, i.i, j.i, k.i)
bind(i.o, block.y)
bind(j.o, block.x)
bind(i.i, thread.y)
bind(j.i, thread.x)
stage(x, shared, at=k.o)
```

```steps id=plan_t model=m
fuse(matmul0, add0, relu0)
tile(i, 16)
tile(j, 16)
reorder(i.o, j.o, i.i, j.i, k)
bind(i.o, block.y)
bind(j.o, block.x)
bind(i.i, thread.y)
bind(j.i, thread.x)
```

```steps id=bad model=m expect=refused
split_k(i, 2)
```

```model id=quiz file=assets/models/cnn.model
```
)";

}  // namespace

TEST_CASE("the check function table: every row has a group, an example and a help line") {
  const std::vector<CheckFunctionInfo> fns = check_functions();
  REQUIRE(fns.size() >= 60);
  std::set<std::string> names;
  for (const CheckFunctionInfo& f : fns) {
    CAPTURE(f.name);
    CHECK(names.insert(f.name).second);  // one row per name
    CHECK_FALSE(f.group.empty());
    CHECK_FALSE(f.help.empty());
    // The row carries the function that evaluates it (LessonSession::call only dispatches).
    const detail::FunctionSpec* spec = detail::find_function(f.name);
    REQUIRE(spec != nullptr);
    CHECK(bool(spec->eval));
    // The example is a call of this very function, with an accepted number of arguments.
    const Expr e = parse_expr(f.example, {"table", 1, 1});
    REQUIRE(e.kind == Expr::Kind::Call);
    CHECK(e.text == f.name);
    CHECK(e.positional() >= f.min_args);
    CHECK(e.positional() <= f.max_args);
  }
  const std::string reference = check_function_reference();
  for (const CheckFunctionInfo& f : fns) {
    CAPTURE(f.name);
    CHECK(reference.find(f.example) != std::string::npos);
    CHECK(reference.find(f.help) != std::string::npos);
  }
}

TEST_CASE("the check function table: every example evaluates in a lesson with its names") {
  for (const CheckFunctionInfo& f : check_functions()) {
    CAPTURE(f.example);
    // A check that holds whenever the example evaluates: the value equals itself.
    const std::string text = std::string(kLesson) + "\n```check model=m machine=h200\n" +
                             f.example + " == " + f.example + "\n```\n";
    LessonSession session(parse_lesson(text, "functions.md"));
    const std::vector<CheckResult> results = session.run_checks();
    REQUIRE(results.size() == 1);
    INFO(results[0].error);
    CHECK(results[0].error.empty());
    CHECK(results[0].pass);
  }
}
