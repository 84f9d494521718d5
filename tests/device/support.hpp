// Device-test support: GPU detection (exit code 77 = skipped where there is none), RAII device buffers,
// runtime-call checks, random 16-bit float data, and comparison against a host reference.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "dcukern/platform/device_context.hpp"
#include "dcukern/platform/runtime.hpp"
#include "dcukern/ref/gemv.hpp"

#if DCUKERN_PLATFORM_HIP
#define DCUKERN_RT(name) hip##name
#elif DCUKERN_PLATFORM_SIM
#define DCUKERN_RT(name) sim##name
#else
#define DCUKERN_RT(name) cuda##name
#endif

// REQUIRE that a runtime call succeeded, naming it.
#define DCUKERN_REQUIRE_RT(expr)                                                                 \
  do {                                                                                           \
    const auto dcukern_rt_err_ = (expr);                                                         \
    INFO(#expr << ": " << ::dcukern::runtime_error_string(dcukern_rt_err_));                    \
    REQUIRE(dcukern_rt_err_ == ::dcukern::kRuntimeSuccess);                                      \
  } while (0)

namespace dcukern::test {

inline bool gpu_available() {
  int n = 0;
  return runtime_device_count(&n) == kRuntimeSuccess && n > 0;
}

// DCUKERN_TEST_QUICK=1: a smaller configuration set (used under compute-sanitizer).
inline bool quick_mode() { return std::getenv("DCUKERN_TEST_QUICK") != nullptr; }

// Draws per distribution check in the full configuration: DCUKERN_TEST_DRAWS, default 2^20. The
// chi-square bound keeps its false-failure rate at any count; fewer draws see less of a bias (the
// simulated device's runs use fewer).
inline int64_t draws_per_check() {
  const char* v = std::getenv("DCUKERN_TEST_DRAWS");
  const long long n = v && *v ? std::atoll(v) : 0;
  return n > 0 ? int64_t(n) : int64_t(1) << 20;
}

// The target-table entry of the current device.
inline const TargetInfo& device_target() {
  const DeviceContext* ctx = nullptr;
  REQUIRE(current_device_context(&ctx).ok());
  return *ctx->target.info;
}

inline void device_synchronize() { DCUKERN_REQUIRE_RT(DCUKERN_RT(DeviceSynchronize)()); }

// Device memory of `count` elements of T, freed on destruction. Never zero-initialised: tests poison it.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    DCUKERN_REQUIRE_RT(DCUKERN_RT(Malloc)(reinterpret_cast<void**>(&ptr_), std::max<size_t>(count, 1) * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) (void)DCUKERN_RT(Free)(ptr_);
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  // Elements [offset, offset + h.size()) from h.
  void upload_at(size_t offset, const std::vector<T>& h) {
    REQUIRE(offset + h.size() <= count_);
    DCUKERN_REQUIRE_RT(
        DCUKERN_RT(Memcpy)(ptr_ + offset, h.data(), h.size() * sizeof(T), DCUKERN_RT(MemcpyHostToDevice)));
  }
  void upload(const std::vector<T>& h) {
    REQUIRE(h.size() <= count_);
    DCUKERN_REQUIRE_RT(DCUKERN_RT(Memcpy)(ptr_, h.data(), h.size() * sizeof(T), DCUKERN_RT(MemcpyHostToDevice)));
  }
  std::vector<T> download() const {
    std::vector<T> h(count_);
    DCUKERN_REQUIRE_RT(DCUKERN_RT(Memcpy)(h.data(), ptr_, count_ * sizeof(T), DCUKERN_RT(MemcpyDeviceToHost)));
    return h;
  }
  void fill_bytes(uint8_t byte) { DCUKERN_REQUIRE_RT(DCUKERN_RT(Memset)(ptr_, byte, count_ * sizeof(T))); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// What `enqueue(stream)` launches (it returns the op's Status, which must be ok), captured into a graph
// on a stream of its own. replay(n) launches the graph n times and waits.
class CapturedGraph {
 public:
  template <class Enqueue>
  explicit CapturedGraph(Enqueue enqueue) {
    DCUKERN_REQUIRE_RT(DCUKERN_RT(StreamCreate)(&stream_));
    DCUKERN_REQUIRE_RT(DCUKERN_RT(StreamBeginCapture)(stream_, DCUKERN_RT(StreamCaptureModeGlobal)));
    const Status captured = enqueue(stream_);
    DCUKERN_REQUIRE_RT(DCUKERN_RT(StreamEndCapture)(stream_, &graph_));
    REQUIRE(captured.ok());
    DCUKERN_REQUIRE_RT(DCUKERN_RT(GraphInstantiate)(&exec_, graph_, nullptr, nullptr, 0));
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (exec_) (void)DCUKERN_RT(GraphExecDestroy)(exec_);
    if (graph_) (void)DCUKERN_RT(GraphDestroy)(graph_);
    if (stream_) (void)DCUKERN_RT(StreamDestroy)(stream_);
  }
  void replay(int times = 1) {
    for (int rep = 0; rep < times; ++rep) DCUKERN_REQUIRE_RT(DCUKERN_RT(GraphLaunch)(exec_, stream_));
    DCUKERN_REQUIRE_RT(DCUKERN_RT(StreamSynchronize)(stream_));
  }

 private:
  DCUKERN_RT(Stream_t) stream_ = nullptr;
  DCUKERN_RT(Graph_t) graph_ = nullptr;
  DCUKERN_RT(GraphExec_t) exec_ = nullptr;
};

// `count` random values uniform in [lo, hi), rounded to dtype t (fp16 / bf16), as raw words.
inline std::vector<uint16_t> random_halfs(DType t, size_t count, std::mt19937_64& rng, float lo = -1.f,
                                          float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint16_t> v(count);
  for (auto& e : v) e = ref::from_float(t, d(rng));
  return v;
}

// The largest error / bound fraction a process saw for each kind of check (where it occurred too), printed
// at exit, one line a kind: how much room the bounds leave, the evidence for setting them. One process per
// test case or the whole suite.
class WorstFractions {
 public:
  explicit WorstFractions(const char* suite) : suite_(suite) {}
  void note(const std::string& kind, double fraction, const std::string& where) {
    Worst& w = worst_[kind];
    if (fraction > w.fraction) w.fraction = fraction, w.where = where;
  }
  ~WorstFractions() {
    for (const auto& [kind, w] : worst_)
      std::printf("%s: worst error / bound in this run: %s %.3g (%s)\n", suite_, kind.c_str(), w.fraction,
                  w.where.c_str());
  }

 private:
  struct Worst {
    double fraction = 0.0;
    std::string where;
  };
  const char* suite_;
  std::map<std::string, Worst> worst_;
};

// Poison pattern for outputs: 0xFFFF is a NaN in fp16 and bf16, so an element never written fails.
constexpr uint8_t kPoisonByte = 0xFF;

}  // namespace dcukern::test
