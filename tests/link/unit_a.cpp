// One of the two units of the one-definition program (every_op.hpp).
#include "every_op.hpp"

int empty_calls_rejected_in_unit_a() { return empty_calls_rejected(); }
