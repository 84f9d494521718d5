// Uses an installed dcukern: resolves a runtime architecture name and asks which GEMV row it would run.
#include <cstdio>
#include <string>

#include "dcukern/gemv/select.hpp"
#include "dcukern/registry/resolve.hpp"

int main() {
  using namespace dcukern;
  alignas(16) static uint16_t x[4096], w[64 * 4096], y[64];
  GemvParams p;
  p.x = {x, DType::f16, 1, 4096, 4096};
  p.w = {w, DType::f16, 64, 4096, 4096};
  p.y = {y, DType::f16, 1, 64, 64};
  const capabilities::GemvRow* row = nullptr;
  const Status s = select_gemv(p, *resolve_target("gfx906:sramecc+:xnack-").info, &row);
  std::printf("%s -> %s\n", s.to_string().c_str(), row ? row->id : "none");
  return s.ok() && std::string(row->id) == "gemv.rowwise.fdot2" ? 0 : 1;
}
