#include "analysis/intervals.h"

#include <algorithm>

namespace gpudoctor {

IntervalSet IntervalSet::unionOf(std::vector<Span> spans) {
  std::erase_if(spans, [](const Span& s) { return s.end <= s.begin; });
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  IntervalSet out;
  for (const auto& s : spans) {
    if (!out.s_.empty() && s.begin <= out.s_.back().end) {
      out.s_.back().end = std::max(out.s_.back().end, s.end);
    } else {
      out.s_.push_back(s);
    }
  }
  return out;
}

int64_t IntervalSet::length() const {
  int64_t n = 0;
  for (const auto& s : s_) n += s.length();
  return n;
}

int64_t IntervalSet::lengthIn(int64_t b, int64_t e) const {
  if (e <= b) return 0;
  // First span that ends after b.
  auto it = std::upper_bound(s_.begin(), s_.end(), b, [](int64_t t, const Span& s) { return t < s.end; });
  int64_t n = 0;
  for (; it != s_.end() && it->begin < e; ++it) n += std::min(e, it->end) - std::max(b, it->begin);
  return n;
}

IntervalSet IntervalSet::intersect(const IntervalSet& o) const {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < s_.size() && j < o.s_.size()) {
    int64_t b = std::max(s_[i].begin, o.s_[j].begin);
    int64_t e = std::min(s_[i].end, o.s_[j].end);
    if (b < e) out.s_.push_back({b, e});
    if (s_[i].end < o.s_[j].end)
      ++i;
    else
      ++j;
  }
  return out;
}

IntervalSet IntervalSet::unite(const IntervalSet& o) const {
  std::vector<Span> all(s_);
  all.insert(all.end(), o.s_.begin(), o.s_.end());
  return unionOf(std::move(all));
}

IntervalSet IntervalSet::subtract(const IntervalSet& o) const {
  IntervalSet out;
  size_t j = 0;
  for (Span s : s_) {
    while (j < o.s_.size() && o.s_[j].end <= s.begin) ++j;
    size_t k = j;
    int64_t cur = s.begin;
    while (k < o.s_.size() && o.s_[k].begin < s.end) {
      if (o.s_[k].begin > cur) out.s_.push_back({cur, o.s_[k].begin});
      cur = std::max(cur, o.s_[k].end);
      ++k;
    }
    if (cur < s.end) out.s_.push_back({cur, s.end});
  }
  return out;
}

IntervalSet IntervalSet::clip(int64_t b, int64_t e) const {
  IntervalSet out;
  if (e <= b) return out;
  auto it = std::upper_bound(s_.begin(), s_.end(), b, [](int64_t t, const Span& s) { return t < s.end; });
  for (; it != s_.end() && it->begin < e; ++it) out.s_.push_back({std::max(b, it->begin), std::min(e, it->end)});
  return out;
}

bool IntervalSet::contains(int64_t t) const {
  auto it = std::upper_bound(s_.begin(), s_.end(), t, [](int64_t x, const Span& s) { return x < s.end; });
  return it != s_.end() && it->begin <= t;
}

}  // namespace gpudoctor
