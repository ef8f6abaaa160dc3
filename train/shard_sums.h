#pragma once
// What one shard's pass reports besides its gradients: a small struct whose members are named numbers, summed over
// the batch's shards in the same tree as the gradients (train/tree.h). The struct lists its members once, in
// fields(), so the sum and the exchange between processes know its size at compile time (one fixed-size block of
// doubles, sent with the gradients: no extra message). For a language model:
//
//   struct LmSums {
//     double loss = 0;          // share * the shard's mean loss: summed over the shards, the batch's mean loss
//     std::int64_t tokens = 0;  // the shard's target tokens: summed, the batch's
//     auto fields() { return std::tie(loss, tokens); }
//   };
//
// A member is a double or a std::int64_t (a count; carried as a double, exact below 2^53). An empty shard's struct
// is the default one: zeros.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cppgrad::train {

template <class R>
concept ShardSums = std::default_initializable<R> && requires(R r) { std::tuple_size<decltype(r.fields())>::value; };

// How many numbers a ShardSums struct holds.
template <ShardSums R>
inline constexpr std::size_t sums_width = std::tuple_size_v<decltype(std::declval<R&>().fields())>;

// The struct's members one by one, in fields() order: visit(i, member), the member as a reference and i its index
// (a std::integral_constant, so a compile-time constant that also converts to std::size_t).
template <ShardSums R, class Visit>
void for_each_sum(R& sums, Visit&& visit) {
  auto members = sums.fields();
  [&]<std::size_t... i>(std::index_sequence<i...>) {
    (visit(std::integral_constant<std::size_t, i>{}, std::get<i>(members)), ...);
  }(std::make_index_sequence<sums_width<R>>{});
}

// into.x += from.x for every member x.
template <ShardSums R>
void add_sums(R& into, R from) {
  auto theirs = from.fields();
  for_each_sum(into, [&](auto i, auto& mine) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(mine)>, double> ||
                      std::is_same_v<std::remove_cvref_t<decltype(mine)>, std::int64_t>,
                  "a ShardSums member is a double or a std::int64_t");
    mine += std::get<decltype(i)::value>(theirs);
  });
}

// The members as doubles, in fields() order, and back.
template <ShardSums R>
std::vector<double> sums_to_doubles(R sums) {
  std::vector<double> out;
  for_each_sum(sums, [&](std::size_t, auto& member) { out.push_back(static_cast<double>(member)); });
  return out;
}
template <ShardSums R>
R sums_from_doubles(const double* values) {
  R sums;
  for_each_sum(sums, [&](std::size_t i, auto& member) {
    member = static_cast<std::remove_cvref_t<decltype(member)>>(values[i]);
  });
  return sums;
}

}  // namespace cppgrad::train
