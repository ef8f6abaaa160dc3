#!/usr/bin/env python3
"""Ops at their edges, as PyTorch computes them: the reference for tests/core/test_ops_differential.cpp.

Each case is one op called on small float64 inputs at an edge (0-d tensors, empty dims, negative dims and
indices, size-1 broadcasting, exponents and domains at their boundaries, out-of-range arguments). PyTorch either
returns a value, and the case records it and the gradient of sum(out * upstream) for every floating input, or
refuses, and the case records that cppgrad must refuse too (an exception whose message names the op).

Regenerate (Debian 12: apt-get install python3-torch):

    /usr/bin/python3 tools/make_edge_cases.py > tests/core/edge_cases.json

The output is deterministic (fixed inputs, sorted keys). NaN and infinities are written as strings.
"""

import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)


def values(t):
    out = []
    for v in t.detach().reshape(-1).tolist():
        if isinstance(v, bool):
            out.append(1.0 if v else 0.0)
        elif isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            out.append("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
        else:
            out.append(v)
    return out


def tensor_json(t):
    dtype = {torch.float64: "f64", torch.int64: "i64", torch.bool: "bool"}[t.dtype]
    return {"dtype": dtype, "shape": list(t.shape), "values": values(t)}


def arange(*shape, start=0.0):
    n = 1
    for d in shape:
        n *= d
    return (torch.arange(n, dtype=torch.float64) * 0.37 - 0.9 + start).reshape(shape)


CASES = []


def case(name, op, inputs, fn, differs=None, **args):
    """inputs: list of tensors (floating ones are differentiated); fn(*inputs) calls PyTorch with args.
    differs: where cppgrad deliberately refuses what PyTorch accepts, the reason (the test checks the refusal)."""
    leaves = [t.clone().requires_grad_(True) if t.is_floating_point() else t for t in inputs]
    entry = {"name": name, "op": op, "args": args, "inputs": [tensor_json(t) for t in inputs]}
    if differs:
        entry["known_difference"] = differs
    try:
        out = fn(*leaves)
    except (RuntimeError, IndexError, ValueError) as e:
        entry["refused"] = str(e).split("\n")[0][:200]
        CASES.append(entry)
        return
    entry["output"] = tensor_json(out)
    if out.is_floating_point() and out.requires_grad:
        upstream = (torch.arange(out.numel(), dtype=torch.float64) * 0.5 + 1).reshape(out.shape)
        entry["upstream"] = tensor_json(upstream)
        (out * upstream).sum().backward()
        entry["grads"] = [tensor_json(t.grad if t.grad is not None else torch.zeros_like(t)) if t.is_floating_point()
                          else None for t in leaves]
    CASES.append(entry)


def build():
    s = torch.tensor(1.5)
    x = arange(2, 3)
    e = torch.zeros(2, 0)
    ix = lambda *v: torch.tensor(v, dtype=torch.int64)

    # reductions: 0-d, empty, negative and repeated dims
    case("sum_0d", "sum", [s], lambda a: a.sum(), dims=[], keepdim=False)
    case("sum_0d_dim0", "sum", [s], lambda a: a.sum(0), dims=[0], keepdim=False)
    case("sum_negative_dim", "sum", [x], lambda a: a.sum(-1, keepdim=True), dims=[-1], keepdim=True)
    case("sum_empty_dim", "sum", [e], lambda a: a.sum(1), dims=[1], keepdim=False)
    case("sum_repeated_dim", "sum", [x], lambda a: a.sum((1, -1)), dims=[1, -1], keepdim=False)
    case("sum_dim_out_of_range", "sum", [x], lambda a: a.sum(2), dims=[2], keepdim=False)
    case("mean_empty_dim", "mean", [e], lambda a: a.mean(1), dims=[1], keepdim=False)
    case("mean_0d", "mean", [s], lambda a: a.mean(), dims=[], keepdim=False)
    case("max_empty_dim", "max", [e], lambda a: a.max(1).values, dim=1, keepdim=False)
    case("max_0d", "max", [s], lambda a: a.max(0).values, dim=0, keepdim=False)
    case("max_negative_dim", "max", [x], lambda a: a.max(-2, keepdim=True).values, dim=-2, keepdim=True)
    case("argmax_negative_dim", "argmax", [x], lambda a: a.argmax(-1), dim=-1, keepdim=False)

    # softmax family
    case("softmax_0d", "softmax", [s], lambda a: a.softmax(0), dim=0)
    case("softmax_size1_dim", "softmax", [arange(3, 1)], lambda a: a.softmax(1), dim=1)
    case("softmax_empty", "softmax", [e], lambda a: a.softmax(1), dim=1)
    case("log_softmax_negative_dim", "log_softmax", [x], lambda a: a.log_softmax(-2), dim=-2)
    case("log_softmax_dim_out_of_range", "log_softmax", [x], lambda a: a.log_softmax(2), dim=2)
    case("softmax_with_neg_inf", "softmax", [torch.tensor([[0.0, -math.inf, 1.0]])], lambda a: a.softmax(1), dim=1)
    case("cross_entropy_all_ignored", "cross_entropy", [arange(3, 4), ix(0, 0, 0)],
         lambda a, t: torch.nn.functional.cross_entropy(a, t, ignore_index=0), ignore_index=0)
    case("cross_entropy_target_out_of_range", "cross_entropy", [arange(2, 3), ix(0, 3)],
         lambda a, t: torch.nn.functional.cross_entropy(a, t), ignore_index=-100)
    case("cross_entropy_negative_target", "cross_entropy", [arange(2, 3), ix(0, -1)],
         lambda a, t: torch.nn.functional.cross_entropy(a, t), ignore_index=-100)

    # elementwise domains
    z = torch.tensor([0.0, 1.0, 4.0])
    neg = torch.tensor([-1.0, 0.0, 2.0])
    for p in (0.0, 0.5, 1.0, 2.0, -1.0, -0.5, 3.0):
        case(f"pow_{p}_at_zero", "pow", [z], lambda a, p=p: a.pow(p), exponent=p)
    case("pow_half_of_negative", "pow", [neg], lambda a: a.pow(0.5), exponent=0.5)
    case("pow_2_of_negative", "pow", [neg], lambda a: a.pow(2.0), exponent=2.0)
    case("log_at_zero", "log", [z], torch.log)
    case("log_of_negative", "log", [neg], torch.log)
    case("sqrt_at_zero", "sqrt", [z], torch.sqrt)
    case("sqrt_of_negative", "sqrt", [neg], torch.sqrt)
    case("div_by_zero", "div", [torch.tensor([1.0, -1.0, 0.0]), torch.tensor([0.0, 0.0, 0.0])], torch.div)
    case("relu_at_zero", "relu", [torch.tensor([-1.0, 0.0, 1.0])], torch.relu)
    case("tanh_large", "tanh", [torch.tensor([-800.0, 0.0, 800.0])], torch.tanh)
    case("sigmoid_large", "sigmoid", [torch.tensor([-800.0, 0.0, 800.0])], torch.sigmoid)
    case("exp_large", "exp", [torch.tensor([-800.0, 0.0, 800.0])], torch.exp)
    case("gelu_0d", "gelu", [s], torch.nn.functional.gelu)

    # broadcasting
    case("add_0d_and_matrix", "add", [s, x], torch.add)
    case("mul_size1_both_sides", "mul", [arange(3, 1), arange(1, 4)], torch.mul)
    case("add_incompatible", "add", [arange(2, 3), arange(2, 2)], torch.add)
    case("add_empty_broadcast", "add", [e, arange(1, 1)], torch.add)
    mask = torch.tensor([[True], [False]])
    case("masked_fill_broadcast_mask", "masked_fill", [x, mask], lambda a, m: a.masked_fill(m, -2.0), value=-2.0)
    case("masked_fill_mask_larger", "masked_fill", [arange(3), torch.tensor([[True, False, True], [False, True, False]])],
         lambda a, m: a.masked_fill(m, 0.0), value=0.0)
    case("where_broadcast", "where", [torch.tensor([True, False, True]), arange(2, 3), s], torch.where)

    # views: negative and repeated dims, -1 sizes, ranges
    case("transpose_negative_dims", "transpose", [arange(2, 3, 4)], lambda a: a.transpose(-1, -3), d0=-1, d1=-3)
    case("transpose_0d", "transpose", [s], lambda a: a.transpose(0, -1), d0=0, d1=-1)
    case("transpose_dim_out_of_range", "transpose", [x], lambda a: a.transpose(0, 2), d0=0, d1=2)
    case("permute_negative_dims", "permute", [arange(2, 3, 4)], lambda a: a.permute(-1, 0, 1), dims=[-1, 0, 1])
    case("permute_repeated_dim", "permute", [arange(2, 3)], lambda a: a.permute(0, 0), dims=[0, 0])
    case("permute_wrong_count", "permute", [arange(2, 3)], lambda a: a.permute(0,), dims=[0])
    case("reshape_minus_one", "reshape", [arange(2, 3)], lambda a: a.reshape(3, -1), shape=[3, -1])
    case("reshape_two_minus_ones", "reshape", [arange(2, 3)], lambda a: a.reshape(-1, -1), shape=[-1, -1])
    case("reshape_wrong_numel", "reshape", [arange(2, 3)], lambda a: a.reshape(4, 2), shape=[4, 2])
    case("reshape_0d_to_1", "reshape", [s], lambda a: a.reshape(1, 1), shape=[1, 1])
    case("reshape_empty_minus_one", "reshape", [e], lambda a: a.reshape(0, -1), shape=[0, -1])
    case("unsqueeze_at_end", "unsqueeze", [x], lambda a: a.unsqueeze(2), dim=2)
    case("unsqueeze_negative", "unsqueeze", [x], lambda a: a.unsqueeze(-1), dim=-1)
    case("unsqueeze_out_of_range", "unsqueeze", [x], lambda a: a.unsqueeze(3), dim=3)
    case("unsqueeze_0d", "unsqueeze", [s], lambda a: a.unsqueeze(0), dim=0)
    case("squeeze_not_size1", "squeeze", [x], lambda a: a.squeeze(1), dim=1)
    case("squeeze_negative", "squeeze", [arange(2, 1)], lambda a: a.squeeze(-1), dim=-1)
    case("squeeze_0d", "squeeze", [s], lambda a: a.squeeze(0), dim=0)
    case("expand_minus_one", "expand", [arange(3, 1)], lambda a: a.expand(-1, 4), shape=[-1, 4])
    case("expand_new_leading_dim", "expand", [arange(3)], lambda a: a.expand(2, 3), shape=[2, 3])
    case("expand_non_singleton", "expand", [arange(3)], lambda a: a.expand(2, 4), shape=[2, 4])
    case("expand_0d", "expand", [s], lambda a: a.expand(2, 2), shape=[2, 2])
    case("slice_negative_bounds", "slice", [arange(6)], lambda a: a[-4:-1], dim=0, start=-4, end=-1, step=1)
    case("slice_past_the_end", "slice", [arange(6)], lambda a: a[2:100], dim=0, start=2, end=100, step=1)
    case("slice_empty_range", "slice", [arange(6)], lambda a: a[4:2], dim=0, start=4, end=2, step=1)
    case("slice_step", "slice", [arange(7)], lambda a: a[1:7:3], dim=0, start=1, end=7, step=3)
    case("narrow_negative_start", "narrow", [arange(5)], lambda a: a.narrow(0, -3, 2), dim=0, start=-3, length=2)
    case("narrow_past_the_end", "narrow", [arange(5)], lambda a: a.narrow(0, 3, 3), dim=0, start=3, length=3)

    # joining and indexing
    case("cat_negative_dim", "cat", [arange(2, 3), arange(2, 1)], lambda a, b: torch.cat([a, b], -1), dim=-1)
    case("cat_with_empty", "cat", [arange(2, 3), torch.zeros(2, 0)], lambda a, b: torch.cat([a, b], 1), dim=1)
    case("cat_shape_mismatch", "cat", [arange(2, 3), arange(3, 3)], lambda a, b: torch.cat([a, b], 1), dim=1)
    case("stack_negative_dim", "stack", [arange(2, 3), arange(2, 3)], lambda a, b: torch.stack([a, b], -1), dim=-1)
    case("stack_0d", "stack", [s, s], lambda a, b: torch.stack([a, b], 0), dim=0)
    case("stack_shape_mismatch", "stack", [arange(2, 3), arange(3, 2)], lambda a, b: torch.stack([a, b], 0), dim=0)
    case("index_select_negative_dim", "index_select", [arange(2, 3), ix(2, 0, 2)],
         lambda a, i: a.index_select(-1, i), dim=-1)
    case("index_select_negative_index", "index_select", [arange(2, 3), ix(-1)], lambda a, i: a.index_select(1, i), dim=1)
    case("index_select_empty_index", "index_select", [arange(2, 3), torch.zeros(0, dtype=torch.int64)],
         lambda a, i: a.index_select(0, i), dim=0)
    case("gather_negative_dim", "gather", [arange(2, 3), ix(2, 0).reshape(2, 1)], lambda a, i: a.gather(-1, i), dim=-1)
    case("gather_index_out_of_range", "gather", [arange(2, 3), ix(3, 0).reshape(2, 1)], lambda a, i: a.gather(1, i), dim=1)
    case("embedding_negative_id", "embedding", [arange(4, 2), ix(0, -1)], lambda w, i: torch.nn.functional.embedding(i, w))
    case("embedding_id_out_of_range", "embedding", [arange(4, 2), ix(0, 4)], lambda w, i: torch.nn.functional.embedding(i, w))
    case("embedding_0d_id", "embedding", [arange(4, 2), torch.tensor(2)], lambda w, i: torch.nn.functional.embedding(i, w))

    case("sub_broadcast_0d", "sub", [x, s], torch.sub)
    case("neg_empty", "neg", [e], torch.neg)
    case("view_of_transposed", "view", [arange(2, 3)], lambda a: a.t().view(6), shape=[6], transpose_first=True)
    case("view_minus_one", "view", [arange(2, 3)], lambda a: a.view(-1), shape=[-1])
    case("where_float_condition", "where", [torch.tensor([1.0, 0.0]), arange(2), arange(2)], torch.where)
    case("masked_fill_float_mask", "masked_fill", [arange(2), torch.tensor([1.0, 0.0])],
         lambda a, m: a.masked_fill(m, 0.0), value=0.0,
         differs="masks are bool, as PyTorch documents; its 1.13 still takes a float mask (a deprecated path)")
    case("index_select_float_index", "index_select", [arange(3), torch.tensor([0.0])],
         lambda a, i: a.index_select(0, i), dim=0)
    case("index_select_2d_index", "index_select", [arange(3), ix(0, 1).reshape(1, 2)],
         lambda a, i: a.index_select(0, i), dim=0)
    case("embedding_2d_ids", "embedding", [arange(4, 3), ix(3, 0, 1, 1).reshape(2, 2)],
         lambda w, i: torch.nn.functional.embedding(i, w))
    case("squeeze_dim_out_of_range", "squeeze", [arange(2, 1)], lambda a: a.squeeze(2), dim=2)
    no_promotion = "cppgrad has no type promotion: mixing dtypes is refused, naming both (convert with .to())"
    case("stack_dtype_mismatch", "stack", [arange(2), ix(1, 2)], lambda a, b: torch.stack([a, b], 0), dim=0,
         differs=no_promotion)
    case("cat_dtype_mismatch", "cat", [arange(2), ix(1, 2)], lambda a, b: torch.cat([a, b], 0), dim=0,
         differs=no_promotion)
    case("softmax_of_integers", "softmax", [ix(1, 2, 3)], lambda a: a.softmax(0), dim=0)
    case("sum_of_integers", "sum", [ix(1, 2, 3)], lambda a: a.sum(), dims=[], keepdim=False,
         differs="reductions are differentiable float ops in cppgrad; sum an int64 tensor after .to(float64)")
    case("linear_bias_wrong_size", "linear", [arange(2, 3), arange(4, 3), arange(3)],
         lambda a, w, b: torch.nn.functional.linear(a, w, b))
    case("linear_in_features_mismatch", "linear", [arange(2, 3), arange(4, 2), arange(4)],
         lambda a, w, b: torch.nn.functional.linear(a, w, b))
    case("linear_1d_input", "linear", [arange(3), arange(4, 3), arange(4)],
         lambda a, w, b: torch.nn.functional.linear(a, w, b))

    # products
    case("matmul_vector_vector", "matmul", [arange(3), arange(3)], torch.matmul)
    case("matmul_matrix_vector", "matmul", [arange(2, 3), arange(3)], torch.matmul)
    case("matmul_vector_matrix", "matmul", [arange(3), arange(3, 2)], torch.matmul)
    case("matmul_batched_vector", "matmul", [arange(2, 2, 3), arange(3)], torch.matmul)
    case("matmul_0d", "matmul", [s, arange(3)], torch.matmul)
    case("matmul_inner_mismatch", "matmul", [arange(2, 3), arange(2, 3)], torch.matmul)
    case("matmul_batch_broadcast_mismatch", "matmul", [arange(2, 2, 3), arange(3, 3, 2)], torch.matmul)
    case("matmul_empty_inner", "matmul", [torch.zeros(2, 0), torch.zeros(0, 3)], torch.matmul)
    case("layer_norm_wrong_weight", "layer_norm", [arange(2, 4), arange(3), arange(3)],
         lambda a, w, b: torch.nn.functional.layer_norm(a, (4,), w, b), eps=1e-5)
    case("layer_norm_width_one", "layer_norm", [arange(3, 1), arange(1), arange(1)],
         lambda a, w, b: torch.nn.functional.layer_norm(a, (1,), w, b), eps=1e-5)


def main():
    build()
    json.dump({"generator": "tools/make_edge_cases.py", "torch_version": torch.__version__, "cases": CASES},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
