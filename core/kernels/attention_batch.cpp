#include "core/kernels/attention_batch.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/kernels/attention.h"
#include "core/small_vector.h"
#include "core/kernels/parallel_for.h"
#include "core/kernels/scratch.h"
#include "core/kernels/layout.h"

namespace cppgrad::kernels {

namespace {

constexpr std::size_t kMaxLeadingDims = kMaxAttentionLeadingDims;
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
  return x.strides().back() == 1 || x.shape().back() <= 1 ? x : x.detach().contiguous();
}

// heads(b0, b1, cursor) for consecutive runs [b0, b1) of the batch items, split across threads when worth it; the
// cursor starts at item b0 and the callee advances it item by item, so the divisions that find an item happen once
// per run. Runs are a multiple of kHeadGroup long (but the last), so groups of heads never straddle two.
template <std::size_t N, typename Heads>
void for_each_run_of_heads(std::int64_t batch, const Shape& lead, bool worth_threads,
                           const std::array<const std::int64_t*, N>& strides, Heads heads) {
  constexpr std::int64_t kRun = 64;
  static_assert(kRun % kHeadGroup == 0);
  parallel_for((batch + kRun - 1) / kRun, worth_threads, [&](std::int64_t run) {
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
      : base(pointer(t)), lead_strides(strides.data()), rs(strides[r]), cs(strides[r + 1]) {}
  HeadRows(const Tensor& t, std::size_t r) : HeadRows(t, t.strides(), r) {}

 private:
  // An operand's rows to read, or a result's to write (which counts as a change of its storage: core/storage.h).
  static T* pointer(const Tensor& t) {
    if constexpr (std::is_const_v<T>) return t.data<std::remove_const_t<T>>();
    else return t.mutable_data<T>();
  }
};

// q, k, v and the mask of every head, as the kernels take them: operands 0-3 of a cursor. A mask every head shares
// (its leading strides all 0: the causal mask) has its reach worked out once (attention_reach), so the kernels can
// skip the pairs it blocks wholesale.
template <typename T>
struct Heads {
  HeadRows<const T> q, k, v;
  HeadRows<const bool> mask;
  // Inline up to 256 positions, so a step at the contexts of the trainers allocates nothing (tests/alloc).
  SmallVector<std::int64_t, 256> key_end, query_begin;

  Heads(const Tensor& q_, const Tensor& k_, const Tensor& v_, const Tensor& m, const Strides& mask_strides, std::size_t r,
        const AttentionDims& dims)
      : q(q_, r), k(k_, r), v(v_, r), mask(m.defined() ? HeadRows<const bool>(m, mask_strides, r) : HeadRows<const bool>()) {
    if (mask.base == nullptr || !std::all_of(mask_strides.begin(), mask_strides.begin() + static_cast<std::ptrdiff_t>(r),
                                             [](std::int64_t s) { return s == 0; }))
      return;
    key_end.resize(static_cast<std::size_t>(dims.Lq));
    query_begin.resize(static_cast<std::size_t>(dims.Lk));
    attention_reach(dims, mask.base, mask.rs, mask.cs, key_end.data(), query_begin.data());
  }

  template <std::size_t N>
  AttentionHead<T> at(const std::array<std::int64_t, N>& off) const {
    AttentionHead<T> h{q.base + off[0], q.rs, k.base + off[1], k.rs, v.base + off[2], v.rs};
    if (mask.base != nullptr) h.mask = mask.base + off[3], h.mask_rs = mask.rs, h.mask_cs = mask.cs;
    if (!key_end.empty()) h.key_end = key_end.data(), h.query_begin = query_begin.data();
    return h;
  }
};

// Where every head's operands are: the shapes the per-head kernels take and the mask's strides, broadcast.
struct Plan {
  std::size_t r;  // the number of leading dims
  Shape lead;
  AttentionDims dims;
  Strides mask_strides;
  std::int64_t batch;
  bool worth_threads;

  Plan(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask)
      : r(static_cast<std::size_t>(q.dim() - 2)), lead(q.shape().begin(), q.shape().end() - 2),
        dims{q.shape()[r], k.shape()[r], q.shape()[r + 1], v.shape()[r + 1],
             1.0 / std::sqrt(static_cast<double>(q.shape()[r + 1]))},
        batch(numel_of(lead)),
        worth_threads(batch * dims.Lq * dims.Lk * (dims.dk + dims.dv) > kAttentionParallelGrain) {
    if (mask.defined()) mask_strides = broadcast_strides(mask.shape(), mask.strides(), scores_shape());
  }
  Shape scores_shape() const { return with_last_two(dims.Lq, dims.Lk); }
  Shape with_last_two(std::int64_t a, std::int64_t b) const {
    Shape s = lead;
    s.push_back(a);
    s.push_back(b);
    return s;
  }
};

// One head's P [Lq, Lk], computed again as the forward computed it, into this thread's buffer for it (valid until the
// thread's next call): what backward reads when the op kept no weights.
const float* recomputed_weights(const AttentionDims& dims, const AttentionHead<float>& head) {
  thread_local ScratchBuffer<float> weights;
  float* p = weights.get(static_cast<std::size_t>(dims.Lq * dims.Lk));
  attention_forward<float>(dims, head, p, /*out=*/nullptr, 0);
  return p;
}

}  // namespace

std::array<Tensor, 2> attention_forward_batch(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const Plan plan(q, k, v, mask);
  const AttentionDims& dims = plan.dims;
  const Tensor qs = unit_rows(q), ks = unit_rows(k), vs = unit_rows(v), ms = mask.defined() ? mask.detach() : Tensor();
  Tensor out = empty_like_layout_of(plan.with_last_two(dims.Lq, dims.dv), vs);
  Tensor weights = Tensor::empty(plan.scores_shape(), DType::Float32);
  const Heads<float> heads(qs, ks, vs, ms, plan.mask_strides, plan.r, dims);
  float* const w0 = weights.mutable_data<float>();
  const HeadRows<float> o(out, plan.r);
  // A decoding step (one query per head) runs eight heads at a time, one per lane; other heads one by one.
  const bool grouped = one_query_group_applies(dims);
  for_each_run_of_heads<5>(
      plan.batch, plan.lead, plan.worth_threads,
      {heads.q.lead_strides, heads.k.lead_strides, heads.v.lead_strides, heads.mask.lead_strides, o.lead_strides},
      [&](std::int64_t b0, std::int64_t b1, HeadCursor<5>& at) {
        std::int64_t b = b0;
        for (; grouped && b + kHeadGroup <= b1; b += kHeadGroup) {
          AttentionHead<float> group[kHeadGroup];
          float* outs[kHeadGroup];
          for (int i = 0; i < kHeadGroup; ++i, at.advance()) group[i] = heads.at(at.offset), outs[i] = o.base + at.offset[4];
          attention_forward_one_query_group(dims, group, w0 + b * dims.Lk, outs);
        }
        for (; b < b1; ++b, at.advance())
          attention_forward<float>(dims, heads.at(at.offset), w0 + b * dims.Lq * dims.Lk, o.base + at.offset[4], o.rs);
      });
  return {out, weights};
}

std::array<Tensor, 3> attention_backward_batch(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& mask, const Tensor& weights) {
  const Tensor qs = unit_rows(q), ks = unit_rows(k), vs = unit_rows(v);
  Tensor dq = empty_like_layout_of(qs.shape(), qs), dk = empty_like_layout_of(ks.shape(), ks),
         dv = empty_like_layout_of(vs.shape(), vs);
  attention_backward_batch_into(g, qs, ks, vs, mask, weights, dq, dk, dv);
  return {dq, dk, dv};
}

void attention_backward_batch_into(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                   const Tensor& weights, const Tensor& dq, const Tensor& dk, const Tensor& dv) {
  const Plan plan(q, k, v, mask);
  const AttentionDims& dims = plan.dims;
  const Tensor qs = unit_rows(q), ks = unit_rows(k), vs = unit_rows(v), ms = mask.defined() ? mask.detach() : Tensor();
  const Tensor gs = unit_rows(g);
  const Heads<float> heads(qs, ks, vs, ms, plan.mask_strides, plan.r, dims);
  const float* const p0 = weights.defined() ? weights.data<float>() : nullptr;
  const HeadRows<const float> go(gs, plan.r);
  const HeadRows<float> gq(dq, plan.r), gk(dk, plan.r), gv(dv, plan.r);
  for_each_head<8>(plan.batch, plan.lead, plan.worth_threads,
                   {heads.q.lead_strides, heads.k.lead_strides, heads.v.lead_strides, heads.mask.lead_strides,
                    go.lead_strides, gq.lead_strides, gk.lead_strides, gv.lead_strides},
                   [&](std::int64_t b, const std::array<std::int64_t, 8>& off) {
                     const AttentionGrads<float> grads{go.base + off[4], go.rs, gq.base + off[5], gq.rs,
                                                       gk.base + off[6], gk.rs, gv.base + off[7], gv.rs};
                     const AttentionHead<float> head = heads.at(off);
                     const float* p = p0 ? p0 + b * dims.Lq * dims.Lk : recomputed_weights(dims, head);
                     attention_backward<float>(dims, head, p, grads);
                   });
}

}  // namespace cppgrad::kernels
