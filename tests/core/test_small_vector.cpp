// SmallVector (core/small_vector.h), the storage of every Shape and Strides: inline up to N values, on the heap
// beyond, and in both cases the same behaviour as std::vector, which these tests use as the reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/small_vector.h"

namespace cppgrad {
namespace {

using Small = SmallVector<std::int64_t, 4>;

void expect_same(const Small& got, const std::vector<std::int64_t>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

bool inline_storage(const Small& v) {
  const auto* self = reinterpret_cast<const char*>(&v);
  const auto* data = reinterpret_cast<const char*>(v.data());
  return data >= self && data < self + sizeof v;
}

TEST(SmallVector, StaysInlineUpToItsCapacityAndGrowsOntoTheHeapBeyond) {
  Small v{1, 2, 3, 4};
  EXPECT_TRUE(inline_storage(v));
  v.push_back(5);
  EXPECT_FALSE(inline_storage(v));
  expect_same(v, {1, 2, 3, 4, 5});
  for (std::int64_t i = 6; i <= 40; ++i) v.push_back(i);
  EXPECT_EQ(v.size(), 40u);
  EXPECT_EQ(v.back(), 40);
}

TEST(SmallVector, EditsLikeStdVectorInlineAndOnTheHeap) {
  for (std::int64_t n : {3, 9}) {  // inline and heap
    std::vector<std::int64_t> want;
    for (std::int64_t i = 0; i < n; ++i) want.push_back(10 * i);
    Small got(want.begin(), want.end());
    got.insert(got.begin() + 1, 7), want.insert(want.begin() + 1, 7);
    got.insert(got.end(), {8, 9}), want.insert(want.end(), {8, 9});
    got.erase(got.begin()), want.erase(want.begin());
    got.erase(got.begin() + 1, got.begin() + 3), want.erase(want.begin() + 1, want.begin() + 3);
    got.push_back(got[0]), want.push_back(want[0]);  // an element of the vector itself
    got.insert(got.begin(), got.back()), want.insert(want.begin(), want.back());
    got.resize(got.size() + 2, -1), want.resize(want.size() + 2, -1);
    got.resize(got.size() + 9, got[0]), want.resize(want.size() + 9, want[0]);  // grows past the block it reads
    got.pop_back(), want.pop_back();
    expect_same(got, want);
    got.resize(1), want.resize(1);
    expect_same(got, want);
    got.assign(12, got[0]), want.assign(12, want[0]);
    expect_same(got, want);
  }
}

TEST(SmallVector, CopiesAndMovesOwnTheirValues) {
  for (std::int64_t n : {2, 7}) {  // inline and heap
    Small a;
    for (std::int64_t i = 0; i < n; ++i) a.push_back(i);
    Small copy = a;
    copy[0] = 100;
    EXPECT_EQ(a[0], 0) << "a copy shares no storage";
    Small moved = std::move(copy);
    EXPECT_EQ(moved[0], 100);
    EXPECT_EQ(moved.size(), static_cast<std::size_t>(n));
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from SmallVector is empty and usable
    copy.push_back(5);
    EXPECT_EQ(copy.size(), 1u);
    a = moved;
    EXPECT_EQ(a, moved);
    a = Small{1, 2};
    expect_same(a, {1, 2});
  }
}

TEST(SmallVector, ComparesByValue) {
  EXPECT_EQ((Small{1, 2, 3}), (Small{1, 2, 3}));
  EXPECT_NE((Small{1, 2, 3}), (Small{1, 2}));
  EXPECT_NE((Small{1, 2, 3, 4, 5}), (Small{1, 2, 3, 4, 6}));
  EXPECT_LT((Small{1, 2}), (Small{1, 3}));
  EXPECT_LT((Small{1, 2}), (Small{1, 2, 0}));
  EXPECT_EQ(Small{}.to_vector(), std::vector<std::int64_t>{});
}

}  // namespace
}  // namespace cppgrad
