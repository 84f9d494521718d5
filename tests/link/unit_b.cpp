// The other unit of the one-definition program (every_op.hpp), and its check: both units' calls rejected.
#include <cstdio>

#include "every_op.hpp"

bool every_empty_call_rejected_in_unit_a();

int main() {
  const bool a = every_empty_call_rejected_in_unit_a(), b = every_empty_call_rejected();
  std::printf("every empty call rejected: unit a %s, unit b %s\n", a ? "yes" : "no", b ? "yes" : "no");
  return a && b ? 0 : 1;
}
