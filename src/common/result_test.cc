#include "common/result.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace result_test {
Result<int> parsePositive(int x) {
  if (x <= 0) return Error{"not positive: " + std::to_string(x)};
  return x;
}

Status check(int x) {
  RETURN_IF_ERROR(parsePositive(x));
  return {};
}

Result<int> twice(int x) {
  ASSIGN_OR_RETURN(int v, parsePositive(x));
  RETURN_IF_ERROR(check(v));
  return 2 * v;
}

TEST(Result, MacrosPassValuesAndReturnTheFirstError) {
  EXPECT_TRUE(check(3).ok());
  EXPECT_EQ(check(-1).message(), "not positive: -1");
  ASSERT_TRUE(twice(4).ok());
  EXPECT_EQ(twice(4).value(), 8);
  EXPECT_EQ(twice(0).message(), "not positive: 0");
  EXPECT_EQ(Status(Error{"x"}).error().message, "x");
}

}  // namespace result_test
}  // namespace gpudoctor
