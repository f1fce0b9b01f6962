// The model language's entry points: text or a file to a Graph, through the syntax tree
// (syntax.cpp) and the Builder (builder.h: shared lowering, form 1 expressions,
// form 2 layers), with located errors.
#include "sim/lang/parser.h"

#include "sim/lang/builder.h"
#include "sim/lang/syntax.h"

namespace tilescope::lang {

// [SECTION] entry points

Graph parse_model(std::string_view text, const std::string& file) {
  syntax::SourceText src(text, file);
  syntax::Module module = syntax::parse_module(src);
  return detail::Builder(src).build(module);
}

std::string_view default_model_text() {
  return "# One fully connected layer: 64 rows of 1024 features in, 512 features out.\n"
         "x: [64, 1024]\n"
         "W: [512, 1024] weight\n"
         "b: [512] weight\n"
         "y = relu(x @ W.T + b)\n";
}

}  // namespace tilescope::lang
