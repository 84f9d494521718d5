// Device test runner: exits 77 (CTest: skipped) where no GPU is usable, so a CPU-only machine never
// reports device tests as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "support.hpp"

int main(int argc, char** argv) {
  if (!dcukern::test::gpu_available()) {
    std::printf("device tests: SKIPPED (no usable GPU on this machine)\n");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
