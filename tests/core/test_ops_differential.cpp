// Every op at its edges against PyTorch: tests/core/edge_cases.json (written by tools/make_edge_cases.py with
// PyTorch 1.13) holds each case's inputs and arguments and either PyTorch's output and gradients or its refusal.
// cppgrad must give the same values (NaN and infinities included) and gradients, or refuse too, with an exception
// whose message names the op. A few cases are known differences, each with its reason in the file: there PyTorch
// accepts what cppgrad deliberately refuses (no dtype promotion, bool masks only), and the test checks the
// refusal. One test per case: OpsDifferential/Case.MatchesPyTorch/<case name>.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/layer_norm.h"
#include "core/ops/matmul.h"
#include "core/ops/reduce.h"
#include "core/ops/select.h"
#include "core/ops/softmax.h"
#include "core/ops/unary.h"
#include "core/ops/views.h"

namespace cppgrad {
namespace {

using json = nlohmann::json;
using Inputs = std::vector<Tensor>;

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

Tensor tensor_from(const json& j) {
  Shape shape;
  for (const auto& d : j.at("shape")) shape.push_back(d.get<std::int64_t>());
  std::vector<double> v;
  for (const auto& e : j.at("values")) v.push_back(number(e));
  const std::string dtype = j.at("dtype");
  return Tensor::from_vector(v, shape, dtype == "f64" ? DType::Float64 : dtype == "i64" ? DType::Int64 : DType::Bool);
}

Dims dims_of(const json& j) {
  Dims d;
  for (const auto& e : j) d.push_back(e.get<std::int64_t>());
  return d;
}

Shape shape_of(const json& j) {
  Shape s;
  for (const auto& e : j) s.push_back(e.get<std::int64_t>());
  return s;
}

// The cppgrad call for each op of the file: (inputs, args) -> output.
using Call = std::function<Tensor(const Inputs&, const json&)>;
const std::map<std::string, Call>& calls() {
  static const std::map<std::string, Call> table = {
      {"sum", [](const Inputs& in, const json& a) { return sum(in[0], dims_of(a["dims"]), a["keepdim"]); }},
      {"mean", [](const Inputs& in, const json& a) { return mean(in[0], dims_of(a["dims"]), a["keepdim"]); }},
      {"max", [](const Inputs& in, const json& a) { return max(in[0], a["dim"], a["keepdim"]); }},
      {"argmax", [](const Inputs& in, const json& a) { return argmax(in[0], a["dim"], a["keepdim"]); }},
      {"softmax", [](const Inputs& in, const json& a) { return softmax(in[0], a["dim"]); }},
      {"log_softmax", [](const Inputs& in, const json& a) { return log_softmax(in[0], a["dim"]); }},
      {"cross_entropy", [](const Inputs& in, const json& a) { return cross_entropy(in[0], in[1], a["ignore_index"]); }},
      {"pow", [](const Inputs& in, const json& a) { return pow(in[0], a["exponent"].get<double>()); }},
      {"log", [](const Inputs& in, const json&) { return log(in[0]); }},
      {"sqrt", [](const Inputs& in, const json&) { return sqrt(in[0]); }},
      {"div", [](const Inputs& in, const json&) { return div(in[0], in[1]); }},
      {"relu", [](const Inputs& in, const json&) { return relu(in[0]); }},
      {"tanh", [](const Inputs& in, const json&) { return tanh(in[0]); }},
      {"sigmoid", [](const Inputs& in, const json&) { return sigmoid(in[0]); }},
      {"exp", [](const Inputs& in, const json&) { return exp(in[0]); }},
      {"gelu", [](const Inputs& in, const json&) { return gelu(in[0]); }},
      {"add", [](const Inputs& in, const json&) { return add(in[0], in[1]); }},
      {"sub", [](const Inputs& in, const json&) { return sub(in[0], in[1]); }},
      {"neg", [](const Inputs& in, const json&) { return neg(in[0]); }},
      {"view", [](const Inputs& in, const json& a) {
         return view(a.value("transpose_first", false) ? in[0].t() : in[0], shape_of(a["shape"]));
       }},
      {"linear", [](const Inputs& in, const json&) { return linear(in[0], in[1], in[2]); }},
      {"mul", [](const Inputs& in, const json&) { return mul(in[0], in[1]); }},
      {"masked_fill", [](const Inputs& in, const json& a) { return masked_fill(in[0], in[1], a["value"]); }},
      {"where", [](const Inputs& in, const json&) { return where(in[0], in[1], in[2]); }},
      {"transpose", [](const Inputs& in, const json& a) { return transpose(in[0], a["d0"], a["d1"]); }},
      {"permute", [](const Inputs& in, const json& a) { return permute(in[0], dims_of(a["dims"])); }},
      {"reshape", [](const Inputs& in, const json& a) { return reshape(in[0], shape_of(a["shape"])); }},
      {"unsqueeze", [](const Inputs& in, const json& a) { return unsqueeze(in[0], a["dim"]); }},
      {"squeeze", [](const Inputs& in, const json& a) { return squeeze(in[0], a["dim"]); }},
      {"expand", [](const Inputs& in, const json& a) { return expand(in[0], shape_of(a["shape"])); }},
      {"slice", [](const Inputs& in, const json& a) { return slice(in[0], a["dim"], a["start"], a["end"], a["step"]); }},
      {"narrow", [](const Inputs& in, const json& a) { return in[0].narrow(a["dim"], a["start"], a["length"]); }},
      {"cat", [](const Inputs& in, const json& a) { return cat(in, a["dim"]); }},
      {"stack", [](const Inputs& in, const json& a) { return stack(in, a["dim"]); }},
      {"index_select", [](const Inputs& in, const json& a) { return index_select(in[0], a["dim"], in[1]); }},
      {"gather", [](const Inputs& in, const json& a) { return gather(in[0], a["dim"], in[1]); }},
      {"embedding", [](const Inputs& in, const json&) { return embedding(in[0], in[1]); }},
      {"matmul", [](const Inputs& in, const json&) { return matmul(in[0], in[1]); }},
      {"layer_norm", [](const Inputs& in, const json& a) { return layer_norm(in[0], in[1], in[2], a["eps"]); }},
  };
  return table;
}

std::vector<json> load_cases() {
  std::ifstream in(CPPGRAD_EDGE_CASES);
  if (!in) throw std::runtime_error(std::string("cannot open ") + CPPGRAD_EDGE_CASES);
  const json doc = json::parse(in);
  return {doc.at("cases").begin(), doc.at("cases").end()};
}

// Equal, NaN to NaN and infinities to themselves, or within 1e-12 relative.
::testing::AssertionResult same_values(const Tensor& actual, const json& expected, const std::string& what) {
  const Tensor want = tensor_from(expected);
  if (actual.shape() != want.shape())
    return ::testing::AssertionFailure() << what << ": shape " << shape_str(actual.shape()) << ", PyTorch "
                                         << shape_str(want.shape());
  const std::vector<double> a = actual.to_double_vector(), b = want.to_double_vector();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ||
                      (std::isfinite(b[i]) && std::abs(a[i] - b[i]) <= 1e-12 * (1 + std::abs(b[i])));
    if (!same)
      return ::testing::AssertionFailure() << what << "[" << i << "]: cppgrad " << a[i] << ", PyTorch " << b[i];
  }
  return ::testing::AssertionSuccess();
}

class Case : public ::testing::TestWithParam<json> {};

TEST_P(Case, MatchesPyTorch) {
  const json& c = GetParam();
  const std::string op = c.at("op");
  ASSERT_TRUE(calls().count(op)) << "no cppgrad call for op '" << op << "' in this test";
  Inputs in;
  for (const auto& t : c.at("inputs")) {
    Tensor x = tensor_from(t);
    if (x.dtype() == DType::Float64) x.set_requires_grad(true);
    in.push_back(x);
  }
  if (c.contains("refused") || c.contains("known_difference")) {
    try {
      const Tensor out = calls().at(op)(in, c.at("args"));
      FAIL() << (c.contains("refused") ? "PyTorch refuses (" + c.at("refused").get<std::string>() + ")"
                                       : "a known difference (" + c.at("known_difference").get<std::string>() +
                                             ") says cppgrad refuses")
             << " but cppgrad returned shape " << shape_str(out.shape());
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos)
          << "the refusal must name the op '" << op << "': " << e.what();
    }
    return;
  }
  Tensor out;
  ASSERT_NO_THROW(out = calls().at(op)(in, c.at("args"))) << "PyTorch accepts this case";
  EXPECT_TRUE(same_values(out, c.at("output"), "output"));
  if (!c.contains("upstream")) return;
  sum(mul(out, tensor_from(c.at("upstream")))).backward();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (c.at("grads")[i].is_null()) continue;
    const Tensor g = in[i].grad().defined() ? in[i].grad() : Tensor::zeros(in[i].shape(), DType::Float64);
    EXPECT_TRUE(same_values(g, c.at("grads")[i], "grad of input " + std::to_string(i)));
  }
}

std::string case_name(const ::testing::TestParamInfo<json>& info) {
  std::string name = info.param.at("name");
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(OpsDifferential, Case, ::testing::ValuesIn(load_cases()), case_name);

}  // namespace
}  // namespace cppgrad
