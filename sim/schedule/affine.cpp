// Affine index expressions: arithmetic, substitution and printing.
#include "sim/schedule/affine.h"

namespace tilescope::schedule {

Affine Affine::var(const std::string& name, int64_t coef) {
  Affine a;
  if (coef != 0) a.terms.emplace_back(name, coef);
  return a;
}

Affine Affine::lit(int64_t c) {
  Affine a;
  a.constant = c;
  return a;
}

int64_t Affine::coef(const std::string& name) const {
  for (const auto& [n, c] : terms)
    if (n == name) return c;
  return 0;
}

Affine& Affine::operator+=(const Affine& o) {
  constant += o.constant;
  for (const auto& [n, c] : o.terms) {
    bool found = false;
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (it->first != n) continue;
      it->second += c;
      if (it->second == 0) terms.erase(it);
      found = true;
      break;
    }
    if (!found && c != 0) terms.emplace_back(n, c);
  }
  return *this;
}

Affine Affine::operator+(const Affine& o) const {
  Affine r = *this;
  r += o;
  return r;
}

Affine Affine::operator-(const Affine& o) const {
  return *this + o * -1;
}

Affine Affine::operator*(int64_t k) const {
  if (k == 0) return {};
  Affine r = *this;
  r.constant *= k;
  for (auto& t : r.terms) t.second *= k;
  return r;
}

bool Affine::operator==(const Affine& o) const {
  if (constant != o.constant || terms.size() != o.terms.size()) return false;
  for (const auto& [n, c] : terms)
    if (o.coef(n) != c) return false;
  return true;
}

Affine Affine::substitute(const std::string& name, const Affine& by) const {
  const int64_t c = coef(name);
  if (c == 0) return *this;
  Affine r = filter([&](const std::string& n) { return n != name; }, true);
  r += by * c;
  return r;
}

std::string Affine::to_string() const {
  return to_code([](const std::string& n) { return n; });
}

std::string c_ident(const std::string& name) {
  std::string s = name;
  for (char& ch : s)
    if (ch == '.') ch = '_';
  return s;
}

}  // namespace tilescope::schedule
