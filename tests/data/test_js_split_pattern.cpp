// The split pattern rewritten for JavaScript's regex (data/js_split_pattern.h), which the WebAssembly build's
// splitter runs: here natively too, since the rewrite is plain text; its matches are held equal to PCRE2's by
// tests/data/test_text_split.cpp under node.
#include "data/js_split_pattern.h"

#include "data/bpe.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using data::javascript_split_pattern;
using data::RunPlace;

TEST(JavaScriptSplitPattern, Gpt2sPatternOnlyChangesItsWhiteSpace) {
  EXPECT_EQ(javascript_split_pattern(data::kGpt2SplitPattern, {}),
            R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|)"
            R"(\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)");
}

TEST(JavaScriptSplitPattern, CaselessGroupsBecomeClassesOfCaseFoldedLetters) {
  EXPECT_EQ(javascript_split_pattern(R"((?i:'s|'k)|x)", {}), R"((?:'[sS\u017F]|'[kK\u212A])|x)");
  EXPECT_EQ(javascript_split_pattern(R"((?i:[a']b)(c))", {}), R"((?:[aA'][bB])(c))");  // c is outside: kept
  EXPECT_EQ(javascript_split_pattern(R"((?i:\p{L}))", {}), R"((?:\p{L}))");  // a property is not a letter to fold
}

TEST(JavaScriptSplitPattern, StartAndEndAnchorsNeverMatchInsideTheText) {
  EXPECT_EQ(javascript_split_pattern(R"(^a|b$|[$^])", {.at_text_start = true, .at_text_end = true}),
            R"(^a|b$|[$^])");
  EXPECT_EQ(javascript_split_pattern(R"(^a|b$|[$^])", {.at_text_start = false, .at_text_end = false}),
            R"((?!)a|b(?!)|[$^])");
  EXPECT_EQ(javascript_split_pattern(R"(\$\^)", {.at_text_start = false, .at_text_end = false}), R"(\$\^)");
}

TEST(JavaScriptSplitPattern, WhatHasNoJavaScriptFormIsRefusedNamingThePattern) {
  EXPECT_THROW_MSG(javascript_split_pattern("(?i)ab", {}), std::invalid_argument,
                   "split pattern '(?i)ab' cannot run on JavaScript's regex (the WebAssembly build): the inline flags "
                   "'(?i)' have no JavaScript form");
  EXPECT_THROW_MSG(javascript_split_pattern("(?i:[a-z])", {}), std::invalid_argument, "a class range inside (?i:");
  EXPECT_THROW_MSG(javascript_split_pattern("(?i:\xC3\xA9)", {}), std::invalid_argument, "a non-ASCII character");
  EXPECT_THROW_MSG(javascript_split_pattern(R"(\Qa\E)", {}), std::invalid_argument, "\\Q...\\E quoting");
  EXPECT_NO_THROW(javascript_split_pattern(R"((?:a)(?=b)(?!c)(?<=d)(?<name>e))", {}));
}

}  // namespace
}  // namespace cppgrad
