// A read-only map from integer ids (correlation, External id) to event indices, built once. Ids
// in Kineto traces are nearly dense, so a direct array is used when the range is compact, else
// sorted pairs with binary search: both far faster and smaller than a node-based hash map for
// millions of entries. The first value inserted for a key wins.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpudoctor {

class IdMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  // Collects a pair; call build() before find().
  void add(int64_t key, uint32_t value) { pairs_.emplace_back(key, value); }
  // Freezes the map.
  void build() {
    if (pairs_.empty()) return;
    std::stable_sort(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    lo_ = pairs_.front().first;
    int64_t span = pairs_.back().first - lo_;
    if (span >= 0 && static_cast<uint64_t>(span) < 4 * pairs_.size() + 1024) {
      dense_.assign(static_cast<size_t>(span) + 1, kNone);
      for (auto it = pairs_.rbegin(); it != pairs_.rend(); ++it)
        dense_[static_cast<size_t>(it->first - lo_)] = it->second;
      pairs_.clear();
      pairs_.shrink_to_fit();
    }
  }
  // The value for key, or kNone.
  uint32_t find(int64_t key) const {
    if (!dense_.empty()) {
      if (key < lo_ || key - lo_ >= static_cast<int64_t>(dense_.size())) return kNone;
      return dense_[static_cast<size_t>(key - lo_)];
    }
    auto it = std::lower_bound(pairs_.begin(), pairs_.end(), key, [](const auto& p, int64_t k) { return p.first < k; });
    return it != pairs_.end() && it->first == key ? it->second : kNone;
  }

 private:
  std::vector<std::pair<int64_t, uint32_t>> pairs_;
  std::vector<uint32_t> dense_;
  int64_t lo_ = 0;
};

}  // namespace gpudoctor
