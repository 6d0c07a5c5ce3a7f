#include "diagnosis/fixes/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "diagnosis/what_if.h"

namespace gpudoctor {
namespace {

TEST(FixRegistry, IdsAreUniqueAndEveryAnsweredFindingMapsBack) {
  std::set<std::string_view> ids;
  const std::set<std::string_view> categories = {"",      "compute", "communication", "host_launch",
                                                 "input", "sync",    "copies"};
  for (const Fix* f : fixRegistry()) {
    EXPECT_TRUE(ids.insert(f->id()).second) << f->id();
    EXPECT_EQ(findFix(f->id()), f);
    EXPECT_TRUE(categories.count(f->category())) << f->id() << ": " << f->category();
    if (!f->alternative().empty()) {
      EXPECT_NE(findFix(f->alternative()), nullptr) << f->id();
    }
    for (std::string_view finding : f->answers()) {
      EXPECT_EQ(fixAnswering(finding), f) << finding;
      EXPECT_EQ(fixOfFinding(finding), f->id());
    }
  }
  EXPECT_EQ(ids.size(), 17u);
  EXPECT_EQ(findFix("flash"), nullptr);
  EXPECT_EQ(fixOfFinding("memory.peak"), "");
  EXPECT_EQ(categoryOfFix("cuda_graphs_model"), "");
  EXPECT_EQ(categoryOfFix("bf16"), "compute");
}

}  // namespace
}  // namespace gpudoctor
