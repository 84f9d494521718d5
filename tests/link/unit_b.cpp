// The other unit of the one-definition program (every_op.hpp), and its check: both units' calls rejected.
#include <cstdio>

#include "every_op.hpp"

int empty_calls_rejected_in_unit_a();

int main() {
  const int a = empty_calls_rejected_in_unit_a(), b = empty_calls_rejected();
  std::printf("empty calls rejected: unit a %d of %d, unit b %d of %d\n", a, kEmptyCalls, b, kEmptyCalls);
  return a == kEmptyCalls && b == kEmptyCalls ? 0 : 1;
}
