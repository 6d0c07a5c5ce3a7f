#include "sources/kineto/json_scan.h"

#include <gtest/gtest.h>

#include <string_view>

namespace gpudoctor {
namespace {

// Helpers over string_views so the tests read as JSON text (raw literals keep backslashes literal).
size_t compositeEnd(std::string_view s, size_t pos = 0) { return findCompositeEnd(s.data(), pos, s.size()); }
size_t stringEnd(std::string_view s, size_t pos = 0) { return findStringEnd(s.data(), pos, s.size()); }
size_t valueEnd(std::string_view s, bool at_eof, size_t pos = 0) {
  return findValueEnd(s.data(), pos, s.size(), at_eof);
}

TEST(FindCompositeEnd, NestedObjectsAndArrays) {
  std::string_view s = R"({"a":{"b":[1,2,{"c":[]}]},"d":{}})";
  EXPECT_EQ(compositeEnd(s), s.size());
  EXPECT_EQ(compositeEnd("{}"), 2u);
  EXPECT_EQ(compositeEnd("[]"), 2u);
  EXPECT_EQ(compositeEnd("[[[]]]"), 6u);
}

TEST(FindCompositeEnd, StopsAtTheMatchingCloseNotTheEndOfTheBuffer) {
  std::string_view s = R"({"a":1},{"b":2})";
  EXPECT_EQ(compositeEnd(s), 7u);
  EXPECT_EQ(compositeEnd(s, 8), s.size());
  // A start in the middle of the buffer.
  EXPECT_EQ(compositeEnd("xx[1,[2]]yy", 2), 9u);
}

TEST(FindCompositeEnd, BracesAndBracketsInsideStringsDoNotCount) {
  // Real kernel names carry unbalanced-looking braces and brackets.
  std::string_view s = R"j({"name":"void at::native::f<{lambda(int)#1}>(int)","args":{"grid":[1,1,1]}},)j";
  EXPECT_EQ(compositeEnd(s), s.size() - 1);
  EXPECT_EQ(compositeEnd(R"({"n":"}}}]]]"})"), 14u);
  EXPECT_EQ(compositeEnd(R"(["{",  "[", "]"])"), 16u);
  EXPECT_EQ(compositeEnd(R"({"{":"{"})"), 9u);
}

TEST(FindCompositeEnd, EscapedQuotesAndBackslashes) {
  // "a\"}" : the quote is escaped, so the brace after it is still inside the string.
  std::string_view escaped_quote = R"({"n":"a\"}"})";
  EXPECT_EQ(compositeEnd(escaped_quote), escaped_quote.size());
  // "a\\" : an escaped backslash, then the closing quote.
  std::string_view escaped_backslash = R"({"n":"a\\"})";
  EXPECT_EQ(compositeEnd(escaped_backslash), escaped_backslash.size());
  // "a\\\"}" : an escaped backslash, then an escaped quote; the string ends at the last quote.
  std::string_view three = R"({"n":"a\\\"}"})";
  EXPECT_EQ(compositeEnd(three), three.size());
  // Several strings with escapes in a row.
  std::string_view many = R"([ "\\", "\"", "\\\\", "x\"]" ])";
  EXPECT_EQ(compositeEnd(many), many.size());
}

TEST(FindCompositeEnd, IncompleteInputHasNoEnd) {
  EXPECT_EQ(compositeEnd("{"), kNoEnd);
  EXPECT_EQ(compositeEnd(R"({"a":[1,2])"), kNoEnd);
  EXPECT_EQ(compositeEnd(R"({"a":"})"), kNoEnd);     // string not closed
  EXPECT_EQ(compositeEnd(R"({"a":"x\"})"), kNoEnd);  // its only closing quote is escaped
  EXPECT_EQ(compositeEnd(R"({"a":"x\)"), kNoEnd);    // cut right after a backslash
  EXPECT_EQ(compositeEnd(R"({"a":")"), kNoEnd);      // cut right after an opening quote
  // The end is judged on buf[0, len) only, whatever follows in memory.
  std::string_view full = R"({"a":1})";
  EXPECT_EQ(findCompositeEnd(full.data(), 0, full.size() - 1), kNoEnd);
}

TEST(FindStringEnd, Basics) {
  EXPECT_EQ(stringEnd(R"("abc",)"), 5u);
  EXPECT_EQ(stringEnd(R"("")"), 2u);
  EXPECT_EQ(stringEnd(R"(x "a" y)", 2), 5u);
  EXPECT_EQ(stringEnd(R"("{lambda(int)#1}")"), 17u);
}

TEST(FindStringEnd, BackslashesBeforeAQuote) {
  // "a\\" ends: an even number of backslashes leaves the quote unescaped.
  EXPECT_EQ(stringEnd(R"("a\\")"), 5u);
  EXPECT_EQ(stringEnd(R"("a\\\\"rest)"), 7u);
  // "a\" does not end: one backslash escapes the quote.
  EXPECT_EQ(stringEnd(R"("a\")"), kNoEnd);
  EXPECT_EQ(stringEnd(R"("a\\\")"), kNoEnd);
  // ... and the next unescaped quote closes it.
  EXPECT_EQ(stringEnd(R"("a\\\"b")"), 8u);
  // Backslashes directly after an escaped quote count from there, not from the string's start.
  EXPECT_EQ(stringEnd(R"("\"\\")"), 6u);
  EXPECT_EQ(stringEnd(R"("\\")"), 4u);
  EXPECT_EQ(stringEnd(R"("\")"), kNoEnd);
}

TEST(FindStringEnd, IncompleteInputHasNoEnd) {
  EXPECT_EQ(stringEnd(R"(")"), kNoEnd);
  EXPECT_EQ(stringEnd(R"("abc)"), kNoEnd);
  std::string_view full = R"("abc")";
  EXPECT_EQ(findStringEnd(full.data(), 0, full.size() - 1), kNoEnd);
}

TEST(FindValueEnd, LiteralsEndAtADelimiter) {
  EXPECT_EQ(valueEnd("123,", false), 3u);
  EXPECT_EQ(valueEnd("123}", false), 3u);
  EXPECT_EQ(valueEnd("123]", false), 3u);
  EXPECT_EQ(valueEnd("123 ", false), 3u);
  EXPECT_EQ(valueEnd("123\n", false), 3u);
  EXPECT_EQ(valueEnd("123\r\n", false), 3u);
  EXPECT_EQ(valueEnd("123\t", false), 3u);
  EXPECT_EQ(valueEnd("-1.5e3,", false), 6u);
  EXPECT_EQ(valueEnd("true,", false), 4u);
  EXPECT_EQ(valueEnd("null}", false), 4u);
  EXPECT_EQ(valueEnd("[1,22,3]", false, 3), 5u);
}

TEST(FindValueEnd, LiteralAtTheEndOfTheBuffer) {
  // More digits may follow in the next read unless the input is over.
  EXPECT_EQ(valueEnd("123", false), kNoEnd);
  EXPECT_EQ(valueEnd("123", true), 3u);
  EXPECT_EQ(valueEnd("false", false), kNoEnd);
  EXPECT_EQ(valueEnd("false", true), 5u);
  EXPECT_EQ(valueEnd("null", true), 4u);
  EXPECT_EQ(valueEnd("x: 12", true, 3), 5u);
}

TEST(FindValueEnd, DispatchesStringsAndComposites) {
  EXPECT_EQ(valueEnd(R"("a,b",)", false), 5u);
  EXPECT_EQ(valueEnd(R"({"a":"}"},)", false), 9u);
  EXPECT_EQ(valueEnd(R"([1,"]"],)", false), 7u);
  // at_eof does not complete a composite or string that is cut short.
  EXPECT_EQ(valueEnd(R"({"a":1)", true), kNoEnd);
  EXPECT_EQ(valueEnd(R"("abc)", true), kNoEnd);
}

}  // namespace
}  // namespace gpudoctor
