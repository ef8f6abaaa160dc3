#include "core/graph_dot.h"

#include <cmath>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/autograd.h"
#include "core/ops/reduce.h"

namespace cppgrad {

namespace {

double grad_norm_of_leaf(const Tensor& t) { return t.grad().defined() ? std::sqrt(squared_norm(t.grad())) : -1; }

std::string norm_line(double norm) {
  if (norm < 0) return "";
  std::ostringstream os;
  os.precision(3);
  os << "\\n|grad| " << norm;
  return os.str();
}

}  // namespace

void write_graph_dot(const Tensor& root, std::ostream& out, const std::map<const TensorImpl*, std::string>& names) {
  out << "digraph autograd {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  std::unordered_map<const TensorImpl*, int> ids;
  std::vector<Tensor> stack = {root};
  ids[root.impl_ptr().get()] = 0;
  while (!stack.empty()) {  // iterative, like the engine: graphs can be deep
    Tensor t = stack.back();
    stack.pop_back();
    const int id = ids.at(t.impl_ptr().get());
    if (const auto& node = t.grad_fn()) {
      out << "  n" << id << " [label=\"" << node->name << "\\n" << shape_str(t.shape()) << norm_line(node->grad_norm)
          << "\"" << (id == 0 ? ", penwidth=2" : "") << "];\n";
      for (const Tensor& in : node->inputs) {
        if (!in.defined() || !in.requires_grad()) continue;
        auto [it, fresh] = ids.try_emplace(in.impl_ptr().get(), static_cast<int>(ids.size()));
        out << "  n" << it->second << " -> n" << id << ";\n";
        if (fresh) stack.push_back(in);
      }
    } else {
      auto name = names.find(t.impl_ptr().get());
      const bool param = name != names.end();
      out << "  n" << id << " [label=\"" << (param ? name->second : "input") << "\\n" << shape_str(t.shape())
          << norm_line(grad_norm_of_leaf(t)) << "\", style=filled, fillcolor=\"" << (param ? "#cfe2f3" : "#eeeeee")
          << "\"];\n";
    }
  }
  out << "}\n";
}

}  // namespace cppgrad
