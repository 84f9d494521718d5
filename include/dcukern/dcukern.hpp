// Umbrella header for device builds (hipcc / nvcc).
#pragma once
#include "dcukern/gemv.hpp"
#include "dcukern/attention.hpp"
#include "dcukern/gdn.hpp"
#include "dcukern/sampling.hpp"
#include "dcukern/sampling_transforms.hpp"
