// One of the two units of the one-definition program (every_op.hpp).
#include "every_op.hpp"

bool every_empty_call_rejected_in_unit_a() { return every_empty_call_rejected(); }
