// distributed/parameters.h: every rank starting from rank 0's parameters.
#include "distributed/parameters.h"

#include "test_util.h"
#include "tests/distributed/group.h"

namespace cppgrad {
namespace {

using test::group;

TEST(Distributed, BroadcastParametersGivesEveryRankTheSourcesValues) {
  const int r = group().rank();
  const std::vector<Tensor> params = {Tensor::full({2, 3}, 1.0 + r, DType::Float32),
                                      Tensor::full({4}, -2.0 * r, DType::Float64)};
  distributed::broadcast_parameters(group(), params);
  EXPECT_EQ(params[0].to_double_vector(), std::vector<double>(6, 1.0));
  EXPECT_EQ(params[1].to_double_vector(), std::vector<double>(4, 0.0));
}

}  // namespace
}  // namespace cppgrad
