// Operator overrides: disable rows, or force one row per op, by id, from the environment
// (DCUKERN_DISABLE=gemv.splitk,gemv.rowwise  DCUKERN_FORCE=gemv.generic) or from the API. A forced row
// is tried first; it still has to pass its ISA and contract checks, so forcing never runs a kernel
// where it is not valid. Thread-safe; the environment is read once, at first use. Forces are counted: a row
// forced twice (two ScopedForce of one id, or one over DCUKERN_FORCE) stays forced until both are undone.
#pragma once
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace dcukern {

class Overrides {
 public:
  static Overrides& instance() {
    static Overrides o;
    return o;
  }
  void disable(std::string_view id) { edit([&] { disabled_.insert(std::string(id)); }); }
  void enable(std::string_view id) { edit([&] { disabled_.erase(std::string(id)); }); }
  void force(std::string_view id) { edit([&] { forced_.insert(std::string(id)); }); }
  void unforce(std::string_view id) {  // undoes one force of `id`
    edit([&] {
      if (const auto it = forced_.find(id); it != forced_.end()) forced_.erase(it);
    });
  }
  void clear() {
    edit([&] {
      disabled_.clear();
      forced_.clear();
    });
  }
  // The common case (no override set) takes no lock.
  bool is_disabled(std::string_view id) const { return contains(disabled_, id); }
  bool is_forced(std::string_view id) const { return contains(forced_, id); }
  // Re-read DCUKERN_DISABLE / DCUKERN_FORCE (comma-separated row ids), adding to what is set.
  void load_environment() {
    add_list(std::getenv("DCUKERN_DISABLE"), &Overrides::disable);
    add_list(std::getenv("DCUKERN_FORCE"), &Overrides::force);
  }

 private:
  Overrides() { load_environment(); }
  void add_list(const char* list, void (Overrides::*add)(std::string_view)) {
    if (!list) return;
    std::string_view s(list);
    while (!s.empty()) {
      const auto comma = s.find(',');
      std::string_view id = s.substr(0, comma);
      while (!id.empty() && id.front() == ' ') id.remove_prefix(1);
      while (!id.empty() && id.back() == ' ') id.remove_suffix(1);
      if (!id.empty()) (this->*add)(id);
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
    }
  }
  template <class Edit>
  void edit(Edit e) {
    std::lock_guard<std::mutex> g(m_);
    e();
    any_.store(!disabled_.empty() || !forced_.empty(), std::memory_order_release);
  }
  template <class Ids>
  bool contains(const Ids& ids, std::string_view id) const {
    if (!any_.load(std::memory_order_acquire)) return false;
    std::lock_guard<std::mutex> g(m_);
    return ids.find(id) != ids.end();
  }
  mutable std::mutex m_;
  std::atomic<bool> any_{false};
  std::set<std::string, std::less<>> disabled_;
  std::multiset<std::string, std::less<>> forced_;
};

// Forces the row `id` while it lives (nullptr: none): a row without device evidence runs only when forced
// (tests, benchmarks and audits that pin it).
class ScopedForce {
 public:
  explicit ScopedForce(const char* id) : id_(id ? id : "") {
    if (!id_.empty()) Overrides::instance().force(id_);
  }
  ~ScopedForce() {
    if (!id_.empty()) Overrides::instance().unforce(id_);
  }
  ScopedForce(const ScopedForce&) = delete;
  ScopedForce& operator=(const ScopedForce&) = delete;

 private:
  std::string id_;
};

}  // namespace dcukern
