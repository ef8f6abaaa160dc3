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

AutogradGraph autograd_graph(const Tensor& root) {
  AutogradGraph g{.tensors = {root}, .edges = {}};
  std::unordered_map<const TensorImpl*, int> ids{{root.impl_ptr().get(), 0}};
  for (std::size_t next = 0; next < g.tensors.size(); ++next) {
    const Tensor t = g.tensors[next];  // a handle of its own: push_back below may move the vector's
    const auto& node = t.grad_fn();
    if (!node) continue;
    for (const Tensor& in : node->inputs) {
      if (!in.defined() || !in.requires_grad()) continue;
      auto [it, fresh] = ids.try_emplace(in.impl_ptr().get(), static_cast<int>(g.tensors.size()));
      if (fresh) g.tensors.push_back(in);
      g.edges.emplace_back(it->second, static_cast<int>(next));
    }
  }
  return g;
}

void write_graph_dot(const Tensor& root, std::ostream& out, const std::map<const TensorImpl*, std::string>& names) {
  out << "digraph autograd {\n  rankdir=BT;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  const AutogradGraph g = autograd_graph(root);
  for (std::size_t id = 0; id < g.tensors.size(); ++id) {
    const Tensor& t = g.tensors[id];
    if (const auto& node = t.grad_fn()) {
      out << "  n" << id << " [label=\"" << node->name << "\\n" << shape_str(t.shape()) << norm_line(node->grad_norm)
          << "\"" << (id == 0 ? ", penwidth=2" : "") << "];\n";
    } else {
      auto name = names.find(t.impl_ptr().get());
      const bool param = name != names.end();
      out << "  n" << id << " [label=\"" << (param ? name->second : "input") << "\\n" << shape_str(t.shape())
          << norm_line(grad_norm_of_leaf(t)) << "\", style=filled, fillcolor=\"" << (param ? "#cfe2f3" : "#eeeeee")
          << "\"];\n";
    }
  }
  for (const auto& [from, to] : g.edges) out << "  n" << from << " -> n" << to << ";\n";
  out << "}\n";
}

}  // namespace cppgrad
