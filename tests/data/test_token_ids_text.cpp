// data/token_ids_text.h: token ids as the text tokenize encode prints and decode reads.
#include "data/token_ids_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "test_util.h"

namespace cppgrad {
namespace {

TEST(TokenIdsText, IdsAreDecimalOneSpaceApartEndingInANewline) {
  const std::vector<std::int64_t> ids = {464, 0, 3290, 50256};
  EXPECT_EQ(data::ids_text(ids), "464 0 3290 50256\n");
  EXPECT_EQ(data::ids_text({}), "\n");
  EXPECT_EQ(data::parse_ids(data::ids_text(ids), 50257, "x"), ids);
  EXPECT_EQ(data::parse_ids(" 1\t2\n\n3 ", 4, "x"), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(data::parse_ids("", 4, "x").empty());
}

TEST(TokenIdsText, AnythingButAnIdOfTheVocabularyIsRefusedByPosition) {
  EXPECT_THROW_MSG(data::parse_ids("1 2 4", 4, "--data 'ids.txt'"), std::invalid_argument,
                   "--data 'ids.txt': id 3 is '4', not a token id of this tokenizer (0..3)");
  EXPECT_THROW_MSG(data::parse_ids("1 -2", 4, "f"), std::invalid_argument, "id 2 is '-2'");
  EXPECT_THROW_MSG(data::parse_ids("7x", 10, "f"), std::invalid_argument, "id 1 is '7x'");
  EXPECT_THROW_MSG(data::parse_ids("99999999999999999999", 10, "f"), std::invalid_argument, "id 1 is");
}

}  // namespace
}  // namespace cppgrad
