// Reads what the GUI tests need from the app's --layout-json / --state-json files, so the shell
// scripts drive the app with clicks at widgets' real positions and assert on its state:
//   gui_json_query FILE /json/pointer      the value (a string without quotes), exit 2 if absent
//   gui_json_query FILE --widget NAME      the centre "X Y" of a named widget, exit 1 when it is
//                                          not drawn or its centre is scrolled out of view
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: gui_json_query FILE /pointer | FILE --widget NAME\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "gui_json_query: %s is not JSON\n", argv[1]);
    return 2;
  }
  if (std::string(argv[2]) == "--widget") {
    if (argc != 4) return 2;
    const std::string name = argv[3];
    for (const auto& w : j.value("widgets", nlohmann::json::array())) {
      if (w.value("name", "") != name) continue;
      if (!w.value("visible", false)) {
        std::fprintf(stderr, "gui_json_query: widget %s is drawn but not visible\n", name.c_str());
        return 1;
      }
      const double x = w["x"].get<double>() + w["w"].get<double>() / 2;
      const double y = w["y"].get<double>() + w["h"].get<double>() / 2;
      std::printf("%.0f %.0f\n", std::floor(x), std::floor(y));
      return 0;
    }
    std::fprintf(stderr, "gui_json_query: no widget %s in %s\n", name.c_str(), argv[1]);
    return 1;
  }
  const nlohmann::json::json_pointer ptr(argv[2]);
  if (!j.contains(ptr)) {
    std::fprintf(stderr, "gui_json_query: %s has no %s\n", argv[1], argv[2]);
    return 2;
  }
  const nlohmann::json& v = j.at(ptr);
  std::printf("%s\n", v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
  return 0;
}
