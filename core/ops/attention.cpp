// Fused scaled dot-product attention: scores, mask, softmax and the weighted sum of values as one op, computed
// head by head in L1 by core/kernels/attention.h. The composed version (nn::scaled_dot_product_attention_reference:
// matmul, mul, where, softmax, matmul) records six graph nodes and five intermediate tensors per call; this records
// one node and keeps only the weights, which its backward needs anyway.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/kernels/attention.h"
#include "core/kernels/parallel_for.h"
#include "core/ops.h"
#include "core/ops/layout.h"

namespace cppgrad {

namespace {

constexpr std::size_t kMaxLeadingDims = 8;
constexpr std::int64_t kNoStrides[kMaxLeadingDims] = {};  // an absent mask: every head reads offset 0

// Consecutive batch items (row-major over the leading dims `lead`) and, for each of N operands, the element offset
// of the item's matrix. Advancing adds one stride per operand: a decoding step runs 2000 heads per call, and a
// division or a loop of multiplications per head and operand showed in its profile.
template <std::size_t N>
class HeadCursor {
 public:
  HeadCursor(std::int64_t flat, const Shape& lead, const std::array<const std::int64_t*, N>& strides)
      : lead_(lead), strides_(strides) {
    for (std::size_t d = lead.size(); d-- > 0;) {
      at_[d] = flat % lead[d];
      flat /= lead[d];
    }
    for (std::size_t o = 0; o < N; ++o)
      for (std::size_t d = 0; d < lead.size(); ++d) offset[o] += at_[d] * strides_[o][d];
  }
  void advance() {
    for (std::size_t d = lead_.size(); d-- > 0;) {
      for (std::size_t o = 0; o < N; ++o) offset[o] += strides_[o][d];
      if (++at_[d] < lead_[d]) return;
      for (std::size_t o = 0; o < N; ++o) offset[o] -= strides_[o][d] * lead_[d];
      at_[d] = 0;
    }
  }
  std::array<std::int64_t, N> offset{};

 private:
  const Shape& lead_;
  std::array<const std::int64_t*, N> strides_;
  std::int64_t at_[kMaxLeadingDims] = {};
};

// A view with unit stride along its last dim (what the kernels read), copying only when needed.
Tensor unit_rows(const Tensor& x) {
  const Tensor t = x.detach();
  return t.strides().back() == 1 || t.shape().back() <= 1 ? t : t.contiguous();
}

// heads(b0, b1, cursor) for consecutive runs [b0, b1) of the batch items, split across threads when worth it; the
// cursor starts at item b0 and the callee advances it item by item, so the divisions that find an item happen once
// per run. Runs are a multiple of kernels::kHeadGroup long (but the last), so groups of heads never straddle two.
template <std::size_t N, typename Heads>
void for_each_run_of_heads(std::int64_t batch, const Shape& lead, bool worth_threads,
                           const std::array<const std::int64_t*, N>& strides, Heads heads) {
  constexpr std::int64_t kRun = 64;
  static_assert(kRun % kernels::kHeadGroup == 0);
  kernels::parallel_for((batch + kRun - 1) / kRun, worth_threads, [&](std::int64_t run) {
    HeadCursor<N> at(run * kRun, lead, strides);
    heads(run * kRun, std::min(batch, (run + 1) * kRun), at);
  });
}

// head(b, offsets of b's matrices) for every batch item b.
template <std::size_t N, typename Head>
void for_each_head(std::int64_t batch, const Shape& lead, bool worth_threads,
                   const std::array<const std::int64_t*, N>& strides, Head head) {
  for_each_run_of_heads<N>(batch, lead, worth_threads, strides, [&](std::int64_t b0, std::int64_t b1, HeadCursor<N>& at) {
    for (std::int64_t b = b0; b < b1; ++b, at.advance()) head(b, at.offset);
  });
}

// Every head's matrix within one tensor [.., L, d] (or the broadcast mask [.., Lq, Lk]): the base pointer, the
// strides of the leading dims and the row stride, read from the tensor once per call.
template <typename T>
struct HeadRows {
  T* base = nullptr;
  const std::int64_t* lead_strides = kNoStrides;
  std::int64_t rs = 0, cs = 1;

  HeadRows() = default;
  HeadRows(const Tensor& t, const Strides& strides, std::size_t r)
      : base(const_cast<T*>(t.data<std::remove_const_t<T>>())), lead_strides(strides.data()), rs(strides[r]),
        cs(strides[r + 1]) {}
  HeadRows(const Tensor& t, std::size_t r) : HeadRows(t, t.strides(), r) {}
};

// q, k, v and the mask of every head, as the kernels take them: operands 0-3 of a cursor.
template <typename T>
struct Heads {
  HeadRows<const T> q, k, v;
  HeadRows<const bool> mask;

  Heads(const Tensor& q_, const Tensor& k_, const Tensor& v_, const Tensor& m, const Strides& mask_strides, std::size_t r)
      : q(q_, r), k(k_, r), v(v_, r), mask(m.defined() ? HeadRows<const bool>(m, mask_strides, r) : HeadRows<const bool>()) {}

  template <std::size_t N>
  kernels::AttentionHead<T> at(const std::array<std::int64_t, N>& off) const {
    kernels::AttentionHead<T> h{q.base + off[0], q.rs, k.base + off[1], k.rs, v.base + off[2], v.rs};
    if (mask.base != nullptr) h.mask = mask.base + off[3], h.mask_rs = mask.rs, h.mask_cs = mask.cs;
    return h;
  }
};

void check_attention_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  auto shapes = [&] {
    return "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " + shape_str(v.shape());
  };
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim())
    throw std::invalid_argument("attention: q, k and v need the same rank, at least 2, got " + shapes());
  if (q.dim() - 2 > static_cast<std::int64_t>(kMaxLeadingDims))
    throw std::invalid_argument("attention: at most 8 leading (batch, head) dims, got " + shapes());
  if (!std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()) ||
      !std::equal(q.shape().begin(), q.shape().end() - 2, v.shape().begin()))
    throw std::invalid_argument("attention: q, k and v need the same leading (batch, head) dims, got " + shapes());
  if (q.shape().back() != k.shape().back())
    throw std::invalid_argument("attention: q and k must share d_k, got " + shapes());
  if (k.shape()[k.dim() - 2] != v.shape()[v.dim() - 2])
    throw std::invalid_argument("attention: k and v must have the same length Lk, got " + shapes());
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || !is_floating(q.dtype()))
    throw std::invalid_argument(std::string("attention: q, k and v must share a floating dtype, got ") +
                                dtype_name(q.dtype()) + ", " + dtype_name(k.dtype()) + ", " + dtype_name(v.dtype()));
  if (mask.defined() && mask.dtype() != DType::Bool)
    throw std::invalid_argument(std::string("attention: mask must be bool (true = may attend), got ") +
                                dtype_name(mask.dtype()));
}

}  // namespace

// q: [.., Lq, dk]  k: [.., Lk, dk]  v: [.., Lk, dv]  mask: bool, broadcast to [.., Lq, Lk]
//   -> output [.., Lq, dv] (stored in v's memory order), weights [.., Lq, Lk] (not differentiable)
// dq = scale dS k;  dk = scale dS^T q;  dv = P^T g;  with dS = P * (g v^T - rowsum(P * g v^T))
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                               std::source_location where) {
  check_attention_inputs(q, k, v, mask);
  const std::int64_t r = q.dim() - 2;
  const Shape lead(q.shape().begin(), q.shape().begin() + r);
  const kernels::AttentionDims dims{q.shape()[r], k.shape()[r], q.shape()[r + 1], v.shape()[r + 1],
                                    1.0 / std::sqrt(static_cast<double>(q.shape()[r + 1]))};
  Shape scores_shape = lead;
  scores_shape.push_back(dims.Lq);
  scores_shape.push_back(dims.Lk);
  Strides mask_strides;
  if (mask.defined()) {
    Shape combined;
    try {
      combined = broadcast_shapes(scores_shape, mask.shape(), "attention");
    } catch (const std::invalid_argument&) {
      combined.clear();
    }
    if (combined != scores_shape)
      throw std::invalid_argument("attention: mask " + shape_str(mask.shape()) +
                                  " does not broadcast to the attention scores " + shape_str(scores_shape));
    mask_strides = broadcast_strides(mask.shape(), mask.strides(), scores_shape);
  }
  const Tensor qs = unit_rows(q), ks = unit_rows(k), vs = unit_rows(v), ms = mask.defined() ? mask.detach() : Tensor();
  Shape out_shape = lead;
  out_shape.push_back(dims.Lq);
  out_shape.push_back(dims.dv);
  Tensor out = empty_like_layout_of(out_shape, vs);
  Tensor weights = Tensor::empty(scores_shape, q.dtype());
  const std::int64_t batch = numel_of(lead);
  const bool worth_threads = batch * dims.Lq * dims.Lk * (dims.dk + dims.dv) > kernels::kAttentionParallelGrain;
  dispatch_floating(q.dtype(), "attention", [&](auto tag) {
    using T = decltype(tag);
    const Heads<T> heads(qs, ks, vs, ms, mask_strides, r);
    T* const w0 = weights.data<T>();
    const HeadRows<T> o(out, r);
    // A decoding step (one query per head) runs eight heads at a time, one per lane; other heads one by one.
    constexpr bool is_float = std::is_same_v<T, float>;
    const bool grouped = is_float && kernels::one_query_group_applies(dims);
    for_each_run_of_heads<5>(
        batch, lead, worth_threads,
        {heads.q.lead_strides, heads.k.lead_strides, heads.v.lead_strides, heads.mask.lead_strides, o.lead_strides},
        [&](std::int64_t b0, std::int64_t b1, HeadCursor<5>& at) {
          std::int64_t b = b0;
          if constexpr (is_float) {
            for (; grouped && b + kernels::kHeadGroup <= b1; b += kernels::kHeadGroup) {
              kernels::AttentionHead<float> group[kernels::kHeadGroup];
              float* outs[kernels::kHeadGroup];
              for (int i = 0; i < kernels::kHeadGroup; ++i, at.advance())
                group[i] = heads.at(at.offset), outs[i] = o.base + at.offset[4];
              kernels::attention_forward_one_query_group(dims, group, w0 + b * dims.Lk, outs);
            }
          }
          for (; b < b1; ++b, at.advance())
            kernels::attention_forward<T>(dims, heads.at(at.offset), w0 + b * dims.Lq * dims.Lk, o.base + at.offset[4],
                                          o.rs);
        });
  });
  const bool need_q = q.requires_grad(), need_k = k.requires_grad(), need_v = v.requires_grad();
  out = record_op(out, "attention", {q, k, v}, [=, p = weights](const Tensor& g) {
    const Tensor gs = unit_rows(g);
    Tensor dq = empty_like_layout_of(qs.shape(), qs), dk = empty_like_layout_of(ks.shape(), ks),
           dv = empty_like_layout_of(vs.shape(), vs);
    dispatch_floating(g.dtype(), "attention backward", [&](auto tag) {
      using T = decltype(tag);
      const Heads<T> heads(qs, ks, vs, ms, mask_strides, r);
      const T* const p0 = p.data<T>();
      const HeadRows<const T> go(gs, r);
      const HeadRows<T> gq(dq, r), gk(dk, r), gv(dv, r);
      for_each_head<8>(batch, lead, worth_threads,
                       {heads.q.lead_strides, heads.k.lead_strides, heads.v.lead_strides, heads.mask.lead_strides,
                        go.lead_strides, gq.lead_strides, gk.lead_strides, gv.lead_strides},
                       [&](std::int64_t b, const std::array<std::int64_t, 8>& off) {
                         const kernels::AttentionGrads<T> grads{go.base + off[4], go.rs, gq.base + off[5], gq.rs,
                                                                gk.base + off[6], gk.rs, gv.base + off[7], gv.rs};
                         kernels::attention_backward<T>(dims, heads.at(off), p0 + b * dims.Lq * dims.Lk, grads);
                       });
    });
    return TensorList{need_q ? dq : Tensor(), need_k ? dk : Tensor(), need_v ? dv : Tensor()};
  }, where);
  return {out, weights};
}

}  // namespace cppgrad
