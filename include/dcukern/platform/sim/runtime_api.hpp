// The runtime of the simulated device: the subset of the CUDA runtime API that dcukern and its device tests
// use, spelled sim* (simMalloc, simMemcpy, simStreamBeginCapture, ...). Device memory is host memory,
// allocations packed one after the other (sim/memory.hpp); every launch runs to completion before the call
// returns (sim/engine.hpp), except on a stream that is capturing, where it is recorded into the graph and runs
// at each simGraphLaunch. One device, ordinal 0,
// whose facts (platform/runtime.hpp: query_device_facts) come from the environment:
//   DCUKERN_SIM_ARCH           the architecture name the registry resolves (default sm_90)
//   DCUKERN_SIM_COMPUTE_UNITS  the compute-unit count launch plans see (default 132)
// Not thread-safe: one host thread drives the simulated device.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dcukern/platform/sim/device_api.hpp"
#include "dcukern/platform/sim/memory.hpp"

enum simError_t {
  simSuccess = 0,
  simErrorInvalidValue,
  simErrorMemoryAllocation,
  simErrorInvalidConfiguration,
  simErrorStreamCaptureUnsupported,
  simErrorNoDevice,
};
enum simMemcpyKind { simMemcpyHostToDevice, simMemcpyDeviceToHost, simMemcpyDeviceToDevice, simMemcpyDefault };
enum simStreamCaptureMode { simStreamCaptureModeGlobal, simStreamCaptureModeThreadLocal, simStreamCaptureModeRelaxed };

namespace dcukern::sim {
struct Graph {
  std::vector<std::function<void()>> steps;
};
struct Stream {
  Graph* capture = nullptr;
};
struct State {
  simError_t last = simSuccess;
};
inline State& state() {
  static State s;
  return s;
}
inline simError_t record(simError_t e) {
  if (e != simSuccess) state().last = e;
  return e;
}
// Runs `step` now, or appends it to the graph the stream is capturing.
inline void enqueue(Stream* s, std::function<void()> step) {
  if (s && s->capture) s->capture->steps.push_back(std::move(step));
  else step();
}
inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}
inline std::string arch_name() {
  const char* v = std::getenv("DCUKERN_SIM_ARCH");
  return v && *v ? v : "sm_90";
}

// A kernel and its arguments, copied at launch as the device copies a launch's parameters.
template <class... Params>
struct Launch {
  void (*kernel)(Params...);
  std::tuple<Params...> args;
  static void body(void* self) {
    auto* l = static_cast<Launch*>(self);
    std::apply(l->kernel, l->args);
  }
};
}  // namespace dcukern::sim

using simStream_t = dcukern::sim::Stream*;
using simGraph_t = dcukern::sim::Graph*;
using simGraphExec_t = dcukern::sim::Graph*;

inline const char* simGetErrorString(simError_t e) {
  switch (e) {
    case simSuccess: return "no error";
    case simErrorInvalidValue: return "invalid argument";
    case simErrorMemoryAllocation: return "out of memory";
    case simErrorInvalidConfiguration: return "invalid configuration argument";
    case simErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case simErrorNoDevice: return "no device";
  }
  return "unknown error";
}
inline simError_t simGetLastError() {
  const simError_t e = dcukern::sim::state().last;
  dcukern::sim::state().last = simSuccess;
  return e;
}
inline simError_t simGetDevice(int* d) { return *d = 0, simSuccess; }
inline simError_t simGetDeviceCount(int* n) { return *n = 1, simSuccess; }
inline simError_t simSetDevice(int d) { return dcukern::sim::record(d == 0 ? simSuccess : simErrorInvalidValue); }
inline simError_t simDeviceSynchronize() { return simSuccess; }

inline simError_t simMalloc(void** p, size_t bytes) {
  *p = dcukern::sim::Memory::instance().allocate(bytes);
  return dcukern::sim::record(*p ? simSuccess : simErrorMemoryAllocation);
}
inline simError_t simFree(void* p) {
  if (p) dcukern::sim::Memory::instance().release(p);
  return simSuccess;
}
inline simError_t simMemcpy(void* dst, const void* src, size_t bytes, simMemcpyKind) {
  if (bytes) std::memmove(dst, src, bytes);
  return simSuccess;
}
inline simError_t simMemcpyAsync(void* dst, const void* src, size_t bytes, simMemcpyKind, simStream_t s = nullptr) {
  dcukern::sim::enqueue(s, [=] {
    if (bytes) std::memmove(dst, src, bytes);
  });
  return simSuccess;
}
inline simError_t simMemset(void* dst, int value, size_t bytes) {
  if (bytes) std::memset(dst, value, bytes);
  return simSuccess;
}
inline simError_t simMemsetAsync(void* dst, int value, size_t bytes, simStream_t s = nullptr) {
  dcukern::sim::enqueue(s, [=] {
    if (bytes) std::memset(dst, value, bytes);
  });
  return simSuccess;
}

inline simError_t simStreamCreate(simStream_t* s) { return *s = new dcukern::sim::Stream, simSuccess; }
inline simError_t simStreamCreateWithFlags(simStream_t* s, unsigned) { return simStreamCreate(s); }
inline simError_t simStreamDestroy(simStream_t s) { return delete s, simSuccess; }
inline simError_t simStreamSynchronize(simStream_t) { return simSuccess; }
inline simError_t simStreamBeginCapture(simStream_t s, simStreamCaptureMode) {
  if (!s || s->capture) return dcukern::sim::record(simErrorInvalidValue);
  s->capture = new dcukern::sim::Graph;
  return simSuccess;
}
inline simError_t simStreamEndCapture(simStream_t s, simGraph_t* g) {
  if (!s || !s->capture) return dcukern::sim::record(simErrorInvalidValue);
  *g = s->capture;
  s->capture = nullptr;
  return simSuccess;
}
inline simError_t simGraphInstantiate(simGraphExec_t* exec, simGraph_t g, void* = nullptr, char* = nullptr,
                                      size_t = 0) {
  *exec = new dcukern::sim::Graph(*g);
  return simSuccess;
}
inline simError_t simGraphLaunch(simGraphExec_t exec, simStream_t s) {
  for (const auto& step : exec->steps) dcukern::sim::enqueue(s, step);
  return simSuccess;
}
inline simError_t simGraphExecDestroy(simGraphExec_t exec) { return delete exec, simSuccess; }
inline simError_t simGraphDestroy(simGraph_t g) { return delete g, simSuccess; }

// kernel<<<grid, block, shared, s>>>(args...): dynamic shared memory is not simulated (shared must be 0).
template <class... Params, class... Args>
inline simError_t simLaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, simStream_t s,
                                  Args... args) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (shared != 0 || threads == 0 || threads > dcukern::sim::kSimMaxThreads || !grid.x || !grid.y || !grid.z)
    return dcukern::sim::record(simErrorInvalidConfiguration);
  using L = dcukern::sim::Launch<Params...>;
  dcukern::sim::enqueue(s, [launch = L{kernel, std::tuple<Params...>(static_cast<Params>(args)...)}, grid,
                            block]() mutable { dcukern::sim::run_grid(grid, block, &L::body, &launch); });
  return simSuccess;
}
