// A float64 finite-difference gradient check for every op and module: one GradCheck.<name> test per entry of the
// registry in apps/checks/gradcheck_cases.cpp (which cppgrad-gradcheck runs too), plus the checks of the checker.
#include <set>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/unary.h"
#include "nn/checks/registry.h"
#include "test_util.h"

namespace cppgrad {
namespace {

using Inputs = std::vector<Tensor>;

// One registry case checked to first order (gradcheck) or to second order (gradgradcheck).
class RegisteredGradcheck : public ::testing::Test {
 public:
  RegisteredGradcheck(const checks::GradcheckCase& c, int order) : case_(c), order_(order) {}
  void TestBody() override {
    const checks::Prepared p = case_.prepare(0);
    const GradcheckResult r = order_ == 1 ? gradcheck(p.fn, p.inputs) : gradgradcheck(p.fn, p.inputs);
    EXPECT_TRUE(r.ok) << case_.name << ": " << r.message;
  }

 private:
  const checks::GradcheckCase& case_;
  int order_;
};

// Registered before main() runs, so --gtest_list_tests (and ctest's discovery) sees every case by name.
[[maybe_unused]] const bool registered = [] {
  for (const checks::GradcheckCase& c : checks::gradcheck_cases())
    for (int order : {1, 2})
      ::testing::RegisterTest(order == 1 ? "GradCheck" : "GradGradCheck", c.name.c_str(), nullptr, nullptr, __FILE__,
                              __LINE__, [&c, order]() -> RegisteredGradcheck* { return new RegisteredGradcheck(c, order); });
  return true;
}();

// ---------------------------------------------------------------- the checker itself
TEST(GradCheckChecker, CatchesAWrongBackward) {
  // The registry's deliberately broken op (square with derivative x instead of 2x) must be refused.
  const checks::Prepared p = checks::broken_case().prepare(0);
  const auto r = gradcheck(p.fn, p.inputs);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, ::testing::HasSubstr("Jacobian mismatch"));
}

TEST(GradCheckChecker, GradgradcheckCatchesAWrongDoubleBackward) {
  // A cube whose backward gives the right first derivative but records nothing under create_graph: gradcheck
  // passes it, gradgradcheck must not (its second derivative comes out 0 instead of 6x).
  const checks::Prepared p = checks::broken_double_backward_case().prepare(0);
  EXPECT_TRUE(gradcheck(p.fn, p.inputs).ok);
  const auto r = gradgradcheck(p.fn, p.inputs);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, ::testing::HasSubstr("second-derivative Jacobian mismatch for input 0"));
}

TEST(GradCheckChecker, GradgradcheckDoesNotCheckTheFirstDerivative) {
  // As torch.autograd.gradgradcheck: it checks the derivatives of the gradient backward computes, not that
  // gradient itself. A square whose backward is g * x (not 2 g x), recorded in ops, is consistent with its own
  // second derivative, so only gradcheck refuses it; this is why cppgrad-gradcheck --order 2 says so.
  auto wrong_square = [](const Inputs& in) {
    Tensor x = in[0];
    return record_op(mul(x.detach(), x.detach()), "wrong_square", {x},
                     [x](const Tensor& g) { return TensorList{mul(g, x)}; });
  };
  const Inputs inputs{test::leaf({3}, 2)};
  EXPECT_FALSE(gradcheck(wrong_square, inputs).ok);
  EXPECT_TRUE(gradgradcheck(wrong_square, inputs).ok);
}

TEST(GradCheckChecker, AFailureNamesTheWorstEntryNotTheFirst) {
  // out = x * (1, 2, 3) with a backward of g * (1.5, 2, 13): element 0 is wrong by 0.5 and met first, element 2
  // is wrong by 10. The message must name element 2, the same entry as `worst` (the table's worst element).
  auto two_wrong = [](const Inputs& in) {
    Tensor x = in[0];
    Tensor out = mul(x.detach(), Tensor::from_vector<double>({1, 2, 3}, {3}));
    Tensor w_wrong = Tensor::from_vector<double>({1.5, 2, 13}, {3});
    return record_op(out, "two_wrong", {x}, [w_wrong](const Tensor& g) { return TensorList{mul(g, w_wrong)}; });
  };
  const auto r = gradcheck(two_wrong, {test::leaf({3}, 2)});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst, "input 0 [2] / out [2]");
  EXPECT_THAT(r.message, ::testing::HasSubstr("Jacobian mismatch for input 0 [3] at element [2], output element [2]: "
                                              "backward gives 13, finite differences give "));
}

TEST(GradCheckChecker, GradgradcheckNamesTheSecondDerivativeAndItsWorstEntry) {
  // A square whose gradient 2 g x has the right value, but whose recorded dependence on x is g (w x + (2 - w) x0)
  // with x0 detached and w = (2, 1.5, 0): second derivatives 2, 1.5, 0 instead of 2, 2, 2. The gradient's element
  // 1 is wrong first (by 0.5 v), element 2 worst (by 2 v); the message names element 2, as `worst` does, and says
  // it is a second derivative.
  auto half_recorded_square = [](const Inputs& in) {
    Tensor x = in[0], x0 = x.detach();
    const Tensor w = Tensor::from_vector<double>({2, 1.5, 0}, {3}), rest = Tensor::from_vector<double>({0, 0.5, 2}, {3});
    return record_op(mul(x0, x0), "half_recorded_square", {x}, [x, x0, w, rest](const Tensor& g) {
      return TensorList{mul(g, add(mul(x, w), mul(x0, rest)))};
    });
  };
  const Inputs inputs{test::leaf({3}, 2)};
  EXPECT_TRUE(gradcheck(half_recorded_square, inputs).ok);
  const auto r = gradgradcheck(half_recorded_square, inputs);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst, "input 0 [2] / grad of input 0 [2]");
  EXPECT_THAT(r.message, ::testing::HasSubstr("second-derivative Jacobian mismatch for input 0 [3] at element [2], "
                                              "gradient of input 0 at element [2]: backward gives "));
}

TEST(GradCheckChecker, GradgradcheckCatchesAWrongFirstDerivativeToo) {
  const checks::Prepared p = checks::broken_case().prepare(0);
  EXPECT_FALSE(gradgradcheck(p.fn, p.inputs).ok);
}

TEST(GradCheckChecker, CatchesAGradientSentToTheWrongElement) {
  // Correct values but the wrong place: a reversed gradient for a non-symmetric op.
  auto bad_scale = [](const Inputs& in) {
    Tensor x = in[0];
    Tensor w = Tensor::from_vector<double>({1, 2, 3}, {3});
    Tensor out = mul(x.detach(), w);
    Tensor w_reversed = Tensor::from_vector<double>({3, 2, 1}, {3});
    return record_op(out, "bad_scale", {x}, [w_reversed](const Tensor& g) { return TensorList{mul(g, w_reversed)}; });
  };
  EXPECT_FALSE(gradcheck(bad_scale, {test::leaf({3}, 2)}).ok);
}

TEST(GradCheckChecker, NamesANaNGradientForWhatItIs) {
  // A backward that returns NaN: every comparison with NaN is false, so it must be caught and reported as NaN
  // with an infinite error, not as "0 error".
  auto nan_backward = [](const Inputs& in) {
    Tensor x = in[0];
    Tensor out = mul(x.detach(), 2.0);
    return record_op(out, "nan_backward", {x}, [](const Tensor& g) { return TensorList{mul(g, std::nan(""))}; });
  };
  const auto r = gradcheck(nan_backward, {test::leaf({2}, 3)});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, ::testing::HasSubstr("backward gives NaN, finite differences give 2"));
  EXPECT_TRUE(std::isinf(r.max_abs_error)) << r.max_abs_error;
  EXPECT_THAT(r.worst, ::testing::HasSubstr("(backward NaN, numerical 2)"));
}

TEST(GradCheckChecker, RefusesFloat32Inputs) {
  Tensor x = Tensor::ones({2}, DType::Float32);
  x.set_requires_grad(true);
  EXPECT_THROW_MSG(gradcheck([](const Inputs& in) { return exp(in[0]); }, {x}), std::invalid_argument, "float64");
}

TEST(GradCheckChecker, EveryOpAndModuleHasACase) {
  // A few names that must stay in the registry (one per op group and module family).
  std::set<std::string> names;
  for (const auto& c : checks::gradcheck_cases()) EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
  for (const char* n : {"Add", "Softmax", "LogSoftmax", "CrossEntropyIgnoreIndex", "MatmulBatchedBroadcast",
                        "MatmulTransposedView", "LayerNorm", "Dropout", "Gather", "Embedding", "MaskedFill", "Where",
                        "MultiHeadAttentionCrossWithPadding", "AdditiveAttention", "MultiplicativeAttention",
                        "TransformerDecoderLayer", "Seq2SeqTransformer"})
    EXPECT_TRUE(names.count(n)) << n;
}

}  // namespace
}  // namespace cppgrad
