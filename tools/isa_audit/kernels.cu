// Every kernel of every op, instantiated for the ISA audit: compiled per gfx target to device assembly
// (hipcc --cuda-device-only -S), which isa_audit then checks against the capability rows.
#include "dcukern/dcukern.hpp"

// Instantiating the launchers instantiates every kernel a row can name. (The GDN, conv1d and sampling
// entry points are plain inline functions: including them already instantiates their kernels.)
template dcukern::Status dcukern::gemv_detail::launch<dcukern::DType::f16>(
    dcukern::GemvKernel, const dcukern::gemv_detail::GemvArgs&, const dcukern::DeviceContext&, dcukern::stream_t);
template dcukern::Status dcukern::gemv_detail::launch<dcukern::DType::bf16>(
    dcukern::GemvKernel, const dcukern::gemv_detail::GemvArgs&, const dcukern::DeviceContext&, dcukern::stream_t);
