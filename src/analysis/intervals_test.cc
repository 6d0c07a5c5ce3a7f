#include "analysis/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <random>
#include <vector>

namespace gpudoctor {
namespace {

using Spans = std::vector<Span>;

// Checks the class invariant: sorted, disjoint, non-empty, non-touching spans.
void expectCanonical(const IntervalSet& s) {
  const auto& v = s.spans();
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_LT(v[i].begin, v[i].end) << "empty span at " << i;
    if (i > 0) {
      EXPECT_LT(v[i - 1].end, v[i].begin) << "overlapping or touching spans at " << i;
    }
  }
}

TEST(IntervalSet, UnionMergesOverlappingAndTouchingSpans) {
  auto s = IntervalSet::unionOf({{0, 10}, {5, 15}, {15, 20}, {30, 40}});
  EXPECT_EQ(s.spans(), (Spans{{0, 20}, {30, 40}}));
  EXPECT_EQ(s.length(), 30);
  expectCanonical(s);
}

TEST(IntervalSet, UnionOfUnsortedAndContainedSpans) {
  auto s = IntervalSet::unionOf({{50, 60}, {0, 5}, {10, 100}, {20, 30}, {-10, -5}});
  EXPECT_EQ(s.spans(), (Spans{{-10, -5}, {0, 5}, {10, 100}}));
  EXPECT_EQ(s.length(), 5 + 5 + 90);
}

TEST(IntervalSet, UnionIgnoresEmptyAndReversedSpans) {
  EXPECT_TRUE(IntervalSet::unionOf({}).empty());
  auto s = IntervalSet::unionOf({{5, 5}, {9, 3}, {1, 2}});
  EXPECT_EQ(s.spans(), (Spans{{1, 2}}));
  // An empty span between two others must not bridge them.
  auto t = IntervalSet::unionOf({{0, 4}, {6, 6}, {8, 10}});
  EXPECT_EQ(t.spans(), (Spans{{0, 4}, {8, 10}}));
  EXPECT_EQ(IntervalSet().length(), 0);
}

TEST(IntervalSet, LengthIn) {
  auto s = IntervalSet::unionOf({{10, 20}, {30, 40}, {50, 60}});
  EXPECT_EQ(s.lengthIn(0, 100), 30);
  EXPECT_EQ(s.lengthIn(15, 35), 5 + 5);
  EXPECT_EQ(s.lengthIn(20, 30), 0);  // exactly a hole: the ends are exclusive
  EXPECT_EQ(s.lengthIn(12, 18), 6);  // inside one span
  EXPECT_EQ(s.lengthIn(10, 60), 30);
  EXPECT_EQ(s.lengthIn(60, 100), 0);
  EXPECT_EQ(s.lengthIn(-5, 10), 0);
  EXPECT_EQ(s.lengthIn(35, 35), 0);
  EXPECT_EQ(s.lengthIn(40, 30), 0);  // reversed window
}

TEST(IntervalSet, Intersect) {
  auto a = IntervalSet::unionOf({{0, 10}, {20, 30}, {40, 50}});
  auto b = IntervalSet::unionOf({{5, 25}, {30, 40}, {45, 100}});
  auto i = a.intersect(b);
  EXPECT_EQ(i.spans(), (Spans{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(b.intersect(a).spans(), i.spans());
  EXPECT_TRUE(a.intersect(IntervalSet()).empty());
  // Touching sets share nothing.
  EXPECT_TRUE(IntervalSet::unionOf({{0, 10}}).intersect(IntervalSet::unionOf({{10, 20}})).empty());
}

TEST(IntervalSet, Unite) {
  auto a = IntervalSet::unionOf({{0, 10}, {20, 30}});
  auto b = IntervalSet::unionOf({{10, 15}, {25, 40}, {50, 60}});
  EXPECT_EQ(a.unite(b).spans(), (Spans{{0, 15}, {20, 40}, {50, 60}}));
  EXPECT_EQ(a.unite(IntervalSet()).spans(), a.spans());
}

TEST(IntervalSet, Subtract) {
  auto a = IntervalSet::unionOf({{0, 100}});
  auto b = IntervalSet::unionOf({{-5, 10}, {20, 30}, {90, 200}});
  EXPECT_EQ(a.subtract(b).spans(), (Spans{{10, 20}, {30, 90}}));
  // One span of the subtrahend can cut several spans of this set.
  auto c = IntervalSet::unionOf({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(c.subtract(IntervalSet::unionOf({{5, 45}})).spans(), (Spans{{0, 5}, {45, 50}}));
  EXPECT_EQ(c.subtract(IntervalSet()).spans(), c.spans());
  EXPECT_TRUE(c.subtract(c).empty());
  EXPECT_TRUE(IntervalSet().subtract(c).empty());
}

TEST(IntervalSet, Clip) {
  auto s = IntervalSet::unionOf({{10, 20}, {30, 40}, {50, 60}});
  EXPECT_EQ(s.clip(15, 55).spans(), (Spans{{15, 20}, {30, 40}, {50, 55}}));
  EXPECT_EQ(s.clip(20, 30).spans(), Spans{});
  EXPECT_EQ(s.clip(0, 100).spans(), s.spans());
  EXPECT_TRUE(s.clip(40, 20).empty());
}

TEST(IntervalSet, ContainsIsHalfOpen) {
  auto s = IntervalSet::unionOf({{10, 20}, {30, 40}});
  EXPECT_FALSE(s.contains(9));
  EXPECT_TRUE(s.contains(10));
  EXPECT_TRUE(s.contains(19));
  EXPECT_FALSE(s.contains(20));
  EXPECT_FALSE(s.contains(25));
  EXPECT_TRUE(s.contains(30));
  EXPECT_FALSE(s.contains(40));
  EXPECT_FALSE(IntervalSet().contains(0));
}

// Randomized cross-check against a bitmap over [0, kRange): every operation on small integer
// sets has an obvious brute-force answer.
constexpr int kRange = 2000;
using Bits = std::bitset<kRange>;

Bits toBits(const IntervalSet& s) {
  Bits b;
  for (const auto& sp : s.spans())
    for (int64_t t = sp.begin; t < sp.end; ++t) b.set(static_cast<size_t>(t));
  return b;
}

Bits spansToBits(const Spans& v) {
  Bits b;
  for (const auto& sp : v)
    for (int64_t t = sp.begin; t < sp.end; ++t) b.set(static_cast<size_t>(t));
  return b;
}

Spans randomSpans(std::mt19937& rng) {
  std::uniform_int_distribution<int> count(0, 25), pos(0, kRange), len(-20, 150);
  Spans v;
  int n = count(rng);
  for (int i = 0; i < n; ++i) {
    int b = pos(rng);
    int e = std::min(kRange, b + len(rng));  // negative lengths make reversed (ignored) spans
    v.push_back({b, e});
  }
  return v;
}

int64_t bitsIn(const Bits& b, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t t = std::max<int64_t>(lo, 0); t < std::min<int64_t>(hi, kRange); ++t)
    n += b.test(static_cast<size_t>(t));
  return n;
}

TEST(IntervalSet, RandomizedAgainstBitmap) {
  std::mt19937 rng(20240611);  // fixed seed: deterministic
  std::uniform_int_distribution<int> pos(-50, kRange + 50);
  for (int iter = 0; iter < 300; ++iter) {
    Spans va = randomSpans(rng), vb = randomSpans(rng);
    auto a = IntervalSet::unionOf(va), b = IntervalSet::unionOf(vb);
    Bits ba = spansToBits(va), bb = spansToBits(vb);
    expectCanonical(a);
    ASSERT_EQ(toBits(a), ba) << "union, iteration " << iter;
    ASSERT_EQ(a.length(), static_cast<int64_t>(ba.count()));

    auto i = a.intersect(b), u = a.unite(b), d = a.subtract(b);
    expectCanonical(i);
    expectCanonical(u);
    expectCanonical(d);
    ASSERT_EQ(toBits(i), ba & bb) << "intersect, iteration " << iter;
    ASSERT_EQ(toBits(u), ba | bb) << "unite, iteration " << iter;
    ASSERT_EQ(toBits(d), ba & ~bb) << "subtract, iteration " << iter;

    for (int q = 0; q < 10; ++q) {
      int64_t lo = pos(rng), hi = pos(rng);
      ASSERT_EQ(a.lengthIn(lo, hi), lo < hi ? bitsIn(ba, lo, hi) : 0) << "lengthIn [" << lo << ", " << hi << ")";
      auto c = a.clip(lo, hi);
      expectCanonical(c);
      ASSERT_EQ(c.length(), a.lengthIn(lo, hi));
      int64_t t = pos(rng);
      ASSERT_EQ(a.contains(t), t >= 0 && t < kRange && ba.test(static_cast<size_t>(t))) << "contains " << t;
    }
  }
}

}  // namespace
}  // namespace gpudoctor
