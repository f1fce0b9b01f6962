// Affine index expressions (c0 + Σ coef·var) over named loop or axis variables, the index language
// of schedules.
//
// Every tensor index in a schedule is affine in its loop variables: splitting i into i.o·f + i.i is
// a substitution, a tile's footprint is the range of the expression over the inner loops, and
// guards for partial tiles are "expr < bound". Keeping the language this small is what makes those
// three questions exact.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::schedule {

struct Affine {
  int64_t constant = 0;
  std::vector<std::pair<std::string, int64_t>> terms;  // no zero coefficients, first-use order

  static Affine var(const std::string& name, int64_t coef = 1);
  static Affine lit(int64_t c);

  int64_t coef(const std::string& name) const;  // 0 when absent
  bool uses(const std::string& name) const { return coef(name) != 0; }
  bool is_constant() const { return terms.empty(); }

  Affine& operator+=(const Affine& o);
  Affine operator+(const Affine& o) const;
  Affine operator-(const Affine& o) const;
  Affine operator*(int64_t k) const;
  bool operator==(const Affine& o) const;

  // Replaces every use of `name` by `by` (e.g. i → i.o*64 + i.i).
  Affine substitute(const std::string& name, const Affine& by) const;
  // Keeps only the terms whose variable satisfies `keep` (the constant is kept when keep_constant).
  template <class Pred>
  Affine filter(Pred keep, bool keep_constant) const {
    Affine r;
    if (keep_constant) r.constant = constant;
    for (const auto& [n, c] : terms)
      if (keep(n)) r.terms.emplace_back(n, c);
    return r;
  }

  // "i.o*64 + i.i - 1"; "0" for the zero expression. `ident` maps a variable name for code output.
  std::string to_string() const;
  template <class Ident>
  std::string to_code(Ident ident) const;
};

// C identifier for a loop name: "i.o" → "i_o".
std::string c_ident(const std::string& name);

template <class Ident>
std::string Affine::to_code(Ident ident) const {
  std::string s;
  for (const auto& [n, c] : terms) {
    if (!s.empty())
      s += c < 0 ? " - " : " + ";
    else if (c < 0)
      s += "-";
    const int64_t a = c < 0 ? -c : c;
    s += ident(n);
    if (a != 1) s += "*" + std::to_string(a);
  }
  if (constant != 0 || s.empty()) {
    if (s.empty()) return std::to_string(constant);
    s += constant < 0 ? " - " + std::to_string(-constant) : " + " + std::to_string(constant);
  }
  return s;
}

}  // namespace tilescope::schedule
