// Exact interval arithmetic on integer nanoseconds: union, intersection, difference, clipping.
// Every figure of the time breakdown is the length of one of these sets, so the figures add up
// to the window exactly, with no sampling and no floating point.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace gpudoctor {

// A half-open span [begin, end) in nanoseconds.
struct Span {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t length() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

// A set of time as sorted, disjoint, non-empty, non-touching spans.
class IntervalSet {
 public:
  IntervalSet() = default;
  // Builds the union of arbitrary spans (any order, overlaps allowed; empty spans ignored).
  static IntervalSet unionOf(std::vector<Span> spans);
  // The spans, sorted and disjoint.
  const std::vector<Span>& spans() const { return s_; }
  // Total length.
  int64_t length() const;
  // Length of the part inside [b, e); O(log n + spans inside).
  int64_t lengthIn(int64_t b, int64_t e) const;
  // This ∩ other.
  IntervalSet intersect(const IntervalSet& o) const;
  // This ∪ other.
  IntervalSet unite(const IntervalSet& o) const;
  // This − other.
  IntervalSet subtract(const IntervalSet& o) const;
  // The part inside [b, e).
  IntervalSet clip(int64_t b, int64_t e) const;
  // True when t lies inside the set.
  bool contains(int64_t t) const;
  bool empty() const { return s_.empty(); }

 private:
  std::vector<Span> s_;
};

}  // namespace gpudoctor
