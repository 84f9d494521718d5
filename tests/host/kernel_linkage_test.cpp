// Every kernel the headers define is a template, so that any number of translation units of one program may
// include it (a plain __global__ definition in a header is defined again in each unit: the program does not
// link). A reading of the headers' text, which covers the kernels of every platform, the CUDA- and HIP-only
// ones included; link_two_units links such a program for the simulated device.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b);
}
bool code_line(const std::string& t) { return !t.empty() && t.rfind("//", 0) != 0 && t.rfind("#", 0) != 0; }
// '<' minus '>' in a line's code (before a // comment).
int angle_depth(const std::string& t) {
  int d = 0;
  for (char c : t.substr(0, t.find("//"))) d += c == '<' ? 1 : c == '>' ? -1 : 0;
  return d;
}

}  // namespace

TEST_CASE("every __global__ definition in the headers is a template") {
  int kernels = 0;
  std::vector<std::string> plain;
  for (const auto& e : std::filesystem::recursive_directory_iterator(DCUKERN_SOURCE_DIR "/include")) {
    if (e.path().extension() != ".hpp") continue;
    std::ifstream in(e.path());
    std::string line;
    // After a template's parameter list (which may span lines), the next code line is templated.
    int open = 0;  // angle brackets of a parameter list still open
    bool templated = false;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string t = trimmed(line);
      if (!code_line(t)) continue;
      if (open > 0) {
        open += angle_depth(t);
        templated = open <= 0;
        continue;
      }
      if (t.rfind("template", 0) == 0) {
        open = angle_depth(t);
        if (open > 0) continue;
        templated = true;  // the parameter list ends on this line (the declaration may follow on it)
      }
      if (t.find("__global__") != std::string::npos) {
        ++kernels;
        if (!templated) plain.push_back(e.path().string() + ":" + std::to_string(n));
      }
      if (t.rfind("template", 0) != 0) templated = false;
    }
  }
  std::string where;
  for (const std::string& p : plain) where += " " + p;
  INFO("plain __global__ definitions at" << where);
  CHECK(kernels >= 25);  // the reading found the kernels (27 when this test was written)
  CHECK(plain.empty());
}
