#include "core/kernels/attention.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels/exp.h"
#include "core/kernels/gemm.h"
#include "core/kernels/scratch.h"
#include "core/kernels/simd.h"

namespace cppgrad::kernels {

namespace {

template <typename T>
bool allowed(const AttentionHead<T>& h, std::int64_t i, std::int64_t j) {
  return h.mask == nullptr || h.mask[i * h.mask_rs + j * h.mask_cs];
}

// Scratch reused by every call on a thread: its contents never outlive a call (core/kernels/scratch.h).
template <typename V>
V* scratch(std::size_t n) {
  thread_local ScratchBuffer<V> buffer;
  return buffer.get(n);
}

}  // namespace

// ----------------------------------------------------------------------------------------- fast, float only
// Every product in forward and backward (Q K^T, P V, dO V^T, dS K, dS^T Q, P^T dO) has the same form: rows of a
// matrix A, read one scalar at a time, times a matrix B packed as rows of whole 8-lane vectors (zero-padded). For
// small heads one small kernel (`product`) computes them all, several rows of A at a time so that independent FMA
// chains overlap (a single row's chain of 8 dependent FMAs would wait on each one's latency). For the reversal model
// (8 keys and 8 dims per head) every row of S, P, O, dQ, dK and dV is exactly one register. Large heads hand their
// products to the tiled GEMM instead (products_by_gemm, below).

namespace {

constexpr std::int64_t kLanes = 8;

std::int64_t vectors_for(std::int64_t n) { return (n + kLanes - 1) / kLanes; }

// The first n floats at p (all 8 when n >= 8), the other lanes zero. Whole vectors take one fixed-size copy (a
// single load or store); a copy of variable size would be a call to memcpy.
[[gnu::always_inline]] static inline f32x8 load_partial(const float* p, std::int64_t n) {
  if (n >= kLanes) return load8(p);
  f32x8 v{};
  for (std::int64_t l = 0; l < n; ++l) v[l] = p[l];
  return v;
}

[[gnu::always_inline]] static inline void store_partial(float* p, f32x8 v, std::int64_t n) {
  if (n >= kLanes) store8(p, v);
  else
    for (std::int64_t l = 0; l < n; ++l) p[l] = v[l];
}

// A call's scratch, carved from one buffer per thread (its contents never outlive the call). Every piece starts on
// a whole vector (32-byte aligned), so it can be read and written as f32x8.
class Scratch {
 public:
  explicit Scratch(std::size_t floats)
      : capacity_(static_cast<std::size_t>(vectors_for(static_cast<std::int64_t>(floats)) * kLanes)),
        buffer_(reinterpret_cast<float*>(scratch<f32x8>(capacity_ / kLanes))) {}
  float* take(std::int64_t floats) {
    float* p = buffer_ + used_;
    used_ += static_cast<std::size_t>(vectors_for(floats) * kLanes);
    assert(used_ <= capacity_ && "attention scratch: a take() the constructor's size does not cover");
    return p;
  }

 private:
  std::size_t capacity_;
  float* buffer_;
  std::size_t used_ = 0;
};

// A matrix read as rows of whole vectors: row r, vector c at data + r * rs + 8c.
struct VectorRows {
  const float* data;
  std::int64_t rs;
  std::int64_t vecs;  // vectors per row
  f32x8 at(std::int64_t r, std::int64_t c) const { return load8(data + r * rs + c * kLanes); }
};

// Rows [n, cols] as VectorRows: read in place when cols is a whole number of vectors, otherwise copied into
// zero-padded rows (reading a partial last vector in place could run past the end of the tensor).
VectorRows as_vector_rows(const float* src, std::int64_t rs, std::int64_t n, std::int64_t cols, Scratch& scratch) {
  const std::int64_t vecs = vectors_for(cols);
  if (cols % kLanes == 0) return {src, rs, vecs};
  float* out = scratch.take(n * vecs * kLanes);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < vecs; ++c)
      store_partial(out + (r * vecs + c) * kLanes, load_partial(src + r * rs + c * kLanes, cols - c * kLanes), kLanes);
  return {out, vecs * kLanes, vecs};
}

// The transpose of rows [n, cols] as VectorRows: `cols` rows of vectors_for(n) vectors, lane l of vector c in row e
// holding src[8c + l, e], zero past n. Whole 8 x 8 blocks go through registers; other sizes are written float by
// float, in order (filling a vector lane by lane on the stack and reading it back whole stalls on store forwarding).
VectorRows transposed_vector_rows(const float* src, std::int64_t rs, std::int64_t n, std::int64_t cols,
                                  Scratch& scratch) {
  const std::int64_t vecs = vectors_for(n), padded = vecs * kLanes;
  float* out = scratch.take(cols * padded);
  if (n % kLanes == 0 && cols % kLanes == 0) {
    for (std::int64_t j = 0; j < n; j += kLanes)
      for (std::int64_t e = 0; e < cols; e += kLanes) transpose8x8(src + j * rs + e, rs, out + e * padded + j, padded);
  } else {
    for (std::int64_t e = 0; e < cols; ++e) {
      for (std::int64_t j = 0; j < n; ++j) out[e * padded + j] = src[j * rs + e];
      for (std::int64_t j = n; j < padded; ++j) out[e * padded + j] = 0.0f;
    }
  }
  return {out, padded, vecs};
}

// A: M x E read as a[i * a_rs + e * a_cs] (so A can be a transposed view);  B: E rows of vectors.
struct SmallProduct {
  std::int64_t M, E;
  const float* a;
  std::int64_t a_rs, a_cs;
  VectorRows b;
};

// The part of a product a block of rows needs (a mask's reach, AttentionHead::key_end): the sum over e in
// [e_begin, e_end) and vectors [0, vecs) of each row; the rest of the product is zero (or blocked) there.
struct ProductRange {
  std::int64_t e_begin, e_end, vecs;
};

// Rows [i0, i0 + R) of A B, vectors [c, c + C) of each: store(i, c, vector c of row i). R x C accumulators; each
// value of A (a broadcast load) feeds C multiply-adds, each vector of B R of them.
template <int R, int C, typename Store>
[[gnu::always_inline]] inline void product_block(const SmallProduct& p, std::int64_t i0, std::int64_t c,
                                                 const ProductRange& range, Store& store) {
  f32x8 acc[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int u = 0; u < C; ++u) acc[r][u] = f32x8{};
  for (std::int64_t e = range.e_begin; e < range.e_end; ++e) {
    f32x8 bv[C];
#pragma GCC unroll 4
    for (int u = 0; u < C; ++u) bv[u] = p.b.at(e, c + u);
    const float* a = p.a + i0 * p.a_rs + e * p.a_cs;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * p.a_rs];
#pragma GCC unroll 4
      for (int u = 0; u < C; ++u) acc[r][u] += ar * bv[u];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int u = 0; u < C; ++u) store(i0 + r, c + u, acc[r][u]);
}

// Rows [i0, i0 + R) of A B, the vectors of them in range: 4 rows x 2 vectors while there are two left (B rows of 16
// keys or dims and more: half the broadcast loads per multiply-add; 8 accumulators, as 16 would not leave AVX2's 16
// registers room for B), then R rows x 1 vector.
template <int R, typename Store>
[[gnu::always_inline]] inline void product_rows(const SmallProduct& p, std::int64_t i0, const ProductRange& range,
                                                Store& store) {
  static_assert(R % 4 == 0);
  std::int64_t c = 0;
  for (; c + 2 <= range.vecs; c += 2)
    for (int r = 0; r < R; r += 4) product_block<4, 2>(p, i0 + r, c, range, store);
  for (; c < range.vecs; ++c) product_block<R, 1>(p, i0, c, range, store);
}

// One row of A B with four partial sums over e (a decoding step's single query): four short FMA chains in flight
// instead of one long one.
template <typename Store>
[[gnu::always_inline]] inline void product_row(const SmallProduct& p, std::int64_t i, const ProductRange& range,
                                               Store& store) {
  for (std::int64_t c = 0; c < range.vecs; ++c) {
    f32x8 acc[4] = {};
    const float* a = p.a + i * p.a_rs;
    std::int64_t e = range.e_begin;
    for (; e + 4 <= range.e_end; e += 4)
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) acc[u] += a[(e + u) * p.a_cs] * p.b.at(e + u, c);
    for (; e < range.e_end; ++e) acc[0] += a[e * p.a_cs] * p.b.at(e, c);
    store(i, c, (acc[0] + acc[1]) + (acc[2] + acc[3]));
  }
}

// The whole product, or with range(i0, rows) -> ProductRange the part each block of rows needs.
template <typename Range, typename Store>
void product(const SmallProduct& p, Range range, Store store) {
  std::int64_t i = 0;
  for (; i + 8 <= p.M; i += 8) product_rows<8>(p, i, range(i, 8), store);
  for (; i + 4 <= p.M; i += 4) product_rows<4>(p, i, range(i, 4), store);
  for (; i < p.M; ++i) product_row(p, i, range(i, 1), store);
}

template <typename Store>
void product(const SmallProduct& p, Store store) {
  product(p, [&](std::int64_t, std::int64_t) { return ProductRange{0, p.E, p.b.vecs}; }, store);
}

// The reach of a block of queries [i0, i0 + n): keys [0, keys_end) hold every key one of them may attend to.
std::int64_t keys_end(const AttentionHead<float>& h, std::int64_t Lk, std::int64_t i0, std::int64_t n) {
  if (h.key_end == nullptr) return Lk;
  std::int64_t end = 0;
  for (std::int64_t i = i0; i < i0 + n; ++i) end = std::max(end, h.key_end[i]);
  return end;
}

// Of a block of keys [j0, j0 + n): queries [queries_begin, Lq) hold every query that may attend to one of them.
std::int64_t queries_begin(const AttentionHead<float>& h, std::int64_t Lq, std::int64_t j0, std::int64_t n) {
  if (h.query_begin == nullptr) return 0;
  std::int64_t begin = Lq;
  for (std::int64_t j = j0; j < j0 + n; ++j) begin = std::min(begin, h.query_begin[j]);
  return begin;
}

// The vectors of query i's row of S or P that hold a key it may attend to; the rest are exactly 0 in P and dS.
std::int64_t row_vectors(const AttentionHead<float>& h, std::int64_t kv, std::int64_t i) {
  return h.key_end == nullptr ? kv : vectors_for(h.key_end[i]);
}

// Softmax, in place, over n vectors whose blocked entries are already -inf: blocked entries get exactly 0, and a row
// with every entry blocked all zeros. Two layouts, one computation:
//  - AcrossLanes: the n vectors are one row of S (its entries in every lane of every vector); the max and the sum
//    are taken down the vectors and then across the lanes. The general path's rows, and (with n = 1, which inlining
//    turns into straight-line code on one register) the one-query path.
//  - DownLanes: lane l of the n vectors is one row, so eight rows are normalised at once with no reductions across
//    lanes and eight independent chains. Rows of at most 8 keys (transposed), and the grouped decoding heads.
enum class SoftmaxRows { AcrossLanes, DownLanes };

template <SoftmaxRows kRows>
[[gnu::always_inline]] static inline void softmax_vectors(f32x8* v, std::int64_t n) {
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  f32x8 m = f32x8{} + minus_inf;
  for (std::int64_t c = 0; c < n; ++c) m = v[c] > m ? v[c] : m;
  if constexpr (kRows == SoftmaxRows::AcrossLanes) m = all_lanes_max(m);
  f32x8 total{};
  for (std::int64_t c = 0; c < n; ++c) {
    const f32x8 e = exp_f32x8(v[c] - m);
    v[c] = v[c] == minus_inf ? f32x8{} : e;
    total += v[c];
  }
  if constexpr (kRows == SoftmaxRows::AcrossLanes) total = all_lanes_sum(total);
  const f32x8 inv = total > 0.0f ? 1.0f / total : f32x8{};  // every entry blocked: all zeros
  for (std::int64_t c = 0; c < n; ++c) v[c] *= inv;
}

// Lanes of keys [8c, 8c + 8) that query i may not attend to (past Lk, or blocked by the mask): all bits set.
i32x8 blocked_lanes(const AttentionHead<float>& h, std::int64_t Lk, std::int64_t i, std::int64_t c) {
  const std::int64_t j0 = c * kLanes;
  const i32x8 past_end = i32x8{0, 1, 2, 3, 4, 5, 6, 7} >= static_cast<std::int32_t>(Lk - j0);
  if (h.mask == nullptr) return past_end;
  if (h.mask_cs == 1 && j0 + kLanes <= Lk) {  // 8 mask bytes in a row: spread them over the lanes by shifts
    using words8 = std::uint32_t __attribute__((vector_size(32)));
    std::uint64_t bytes;
    std::memcpy(&bytes, h.mask + i * h.mask_rs + j0, sizeof bytes);
    const auto lo = static_cast<std::uint32_t>(bytes), hi = static_cast<std::uint32_t>(bytes >> 32);
    const words8 lanes = (words8{lo, lo, lo, lo, hi, hi, hi, hi} >> words8{0, 8, 16, 24, 0, 8, 16, 24}) & 0xffu;
    return lanes == 0u;
  }
  i32x8 out;
  for (std::int64_t l = 0; l < kLanes; ++l) out[l] = j0 + l < Lk && allowed(h, i, j0 + l) ? 0 : -1;
  return out;
}

// One query against at most 8 keys of 8 dims, values of 8 (a decoding step of the reversal model): the whole head
// in registers, no scratch and no packing, a fifth of the general path's instructions (whose setup is sized for
// many rows). What is left is mostly the softmax's dependent chain, which the CPU overlaps with the next head's.
void attention_one_query(const AttentionDims& d, const AttentionHead<float>& h, float* weights, float* out) {
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  const f32x8 q = load8(h.q);
  f32x8 products[8];  // products[j] = q * k_j, its lanes summed below into score j
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) products[j] = j < d.Lk ? q * load8(h.k + j * h.k_rs) : f32x8{};
  f32x8 row[1] = {lane_sums(products) * static_cast<float>(d.scale)};
  row[0] = blocked_lanes(h, d.Lk, 0, 0) ? f32x8{} + minus_inf : row[0];
  softmax_vectors<SoftmaxRows::AcrossLanes>(row, 1);
  const f32x8 w = row[0];
  store_partial(weights, w, d.Lk);
  f32x8 even{}, odd{};  // O = sum_j w_j v_j, two FMA chains
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 2) {
    if (j < d.Lk) even += w[j] * load8(h.v + j * h.v_rs);
    if (j + 1 < d.Lk) odd += w[j + 1] * load8(h.v + (j + 1) * h.v_rs);
  }
  store_partial(out, even + odd, kLanes);
}

// Heads this large take the tiled GEMM (core/kernels/gemm.h) for their products: the large configuration's heads (64
// queries and keys, 32 dims) ran at 66 GFLOP/s on the 8-lane product above, whose every multiply-add waits on a
// broadcast load. The bounds are where every product is wide enough (N >= 32) for the GEMM's 16-lane panels and big
// enough (M N K >= 16384) to be tiled at all; smaller heads stay on `product`, one register per row.
bool products_by_gemm(const AttentionDims& d) { return d.Lq >= 16 && d.Lk >= 32 && d.dk >= 32 && d.dv >= 32; }

// C [M, N] (rows ldc apart) = A [M, K] @ B [K, N].
void gemm_into(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B, float* C,
               std::int64_t ldc) {
  const std::int64_t zero = 0;
  batched_gemm<float>(1, M, N, K, A, &zero, B, &zero, C, &zero, ldc);
}

// The same, or zeros when the sum is empty (K = 0: a block no key or query reaches).
void gemm_or_zero(std::int64_t M, std::int64_t N, std::int64_t K, MatrixRef<float> A, MatrixRef<float> B, float* C,
                  std::int64_t ldc) {
  if (K > 0) return gemm_into(M, N, K, A, B, C, ldc);
  for (std::int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
}

// dS = P * (dP - rowsum(P * dP)) * scale, in place over dP: Lq rows of kv vectors, lanes past Lk zero in dP (P's are
// zero there too). Rows of one vector go eight at a time, their eight sums across lanes done together by lane_sums.
// A row's vectors past its reach (row_vectors) are set to 0 without reading dP there, which the products may have
// left unwritten: P is 0 there.
void softmax_backward_rows(const AttentionDims& d, const AttentionHead<float>& h, const float* weights, f32x8* ds,
                           std::int64_t kv, float scale) {
  std::int64_t i0 = 0;
  if (kv == 1)
    for (; i0 + 8 <= d.Lq; i0 += 8) {
      f32x8 p[8], products[8];
      for (int r = 0; r < 8; ++r) {
        p[r] = load_partial(weights + (i0 + r) * d.Lk, d.Lk);
        products[r] = p[r] * ds[i0 + r];
      }
      float row_dots[8];
      store8(row_dots, lane_sums(products));
      for (int r = 0; r < 8; ++r)  // a row with no key in reach may have an unwritten dP: 0 by a select
        ds[i0 + r] = row_vectors(h, kv, i0 + r) == 0 ? f32x8{} : p[r] * (ds[i0 + r] - row_dots[r]) * scale;
    }
  for (std::int64_t i = i0; i < d.Lq; ++i) {
    f32x8* dsi = ds + i * kv;
    const std::int64_t n = row_vectors(h, kv, i);
    f32x8 row_dot{};
    for (std::int64_t c = 0; c < n; ++c) row_dot += load_partial(weights + i * d.Lk + c * kLanes, d.Lk - c * kLanes) * dsi[c];
    const f32x8 r = all_lanes_sum(row_dot);
    for (std::int64_t c = 0; c < n; ++c)
      dsi[c] = load_partial(weights + i * d.Lk + c * kLanes, d.Lk - c * kLanes) * (dsi[c] - r) * scale;
    for (std::int64_t c = n; c < kv; ++c) dsi[c] = f32x8{};
  }
}

// Heads on the GEMM go through their queries (and keys) in blocks of this many, each block's products cut to the
// keys (queries) in its reach: the causal mask's 128 x 128 heads then do 10 of 16 blocks of each product.
constexpr std::int64_t kGemmBlock = 32;

// The backward of a head whose products take the GEMM: dP = dO V^T, dS, then dQ = dS K, dK = dS^T Q, dV = P^T dO,
// every operand given through its strides (the GEMM packs what it must: V^T, and dS^T or P^T when N spans panels).
// Blocks of queries take dP and dQ over the keys in their reach; blocks of keys dK and dV over the queries that
// reach them.
void attention_backward_by_gemm(const AttentionDims& d, const AttentionHead<float>& h, const float* weights,
                                const AttentionGrads<float>& g) {
  const std::int64_t kv = vectors_for(d.Lk), ld = kv * kLanes;  // dS's padded row length
  Scratch scratch(static_cast<std::size_t>(d.Lq * ld));
  float* dsf = scratch.take(d.Lq * ld);
  for (std::int64_t i0 = 0; i0 < d.Lq; i0 += kGemmBlock) {
    const std::int64_t rows = std::min(kGemmBlock, d.Lq - i0), end = keys_end(h, d.Lk, i0, rows);
    if (end > 0) gemm_into(rows, end, d.dv, {g.dout + i0 * g.dout_rs, g.dout_rs, 1}, {h.v, 1, h.v_rs}, dsf + i0 * ld, ld);
    for (std::int64_t i = i0; i < i0 + rows; ++i) std::fill(dsf + i * ld + end, dsf + (i + 1) * ld, 0.0f);
  }
  softmax_backward_rows(d, h, weights, reinterpret_cast<f32x8*>(dsf), kv, static_cast<float>(d.scale));
  for (std::int64_t i0 = 0; i0 < d.Lq; i0 += kGemmBlock) {
    const std::int64_t rows = std::min(kGemmBlock, d.Lq - i0), end = keys_end(h, d.Lk, i0, rows);
    gemm_or_zero(rows, d.dk, end, {dsf + i0 * ld, ld, 1}, {h.k, h.k_rs, 1}, g.dq + i0 * g.dq_rs, g.dq_rs);
  }
  for (std::int64_t j0 = 0; j0 < d.Lk; j0 += kGemmBlock) {
    const std::int64_t keys = std::min(kGemmBlock, d.Lk - j0), begin = queries_begin(h, d.Lq, j0, keys);
    gemm_or_zero(keys, d.dk, d.Lq - begin, {dsf + begin * ld + j0, 1, ld}, {h.q + begin * h.q_rs, h.q_rs, 1},
                 g.dk + j0 * g.dk_rs, g.dk_rs);
    gemm_or_zero(keys, d.dv, d.Lq - begin, {weights + begin * d.Lk + j0, 1, d.Lk},
                 {g.dout + begin * g.dout_rs, g.dout_rs, 1}, g.dv + j0 * g.dv_rs, g.dv_rs);
  }
}

}  // namespace

void attention_reach(const AttentionDims& d, const bool* mask, std::int64_t mask_rs, std::int64_t mask_cs,
                     std::int64_t* key_end, std::int64_t* query_begin) {
  std::fill(query_begin, query_begin + d.Lk, d.Lq);
  for (std::int64_t i = 0; i < d.Lq; ++i) {
    key_end[i] = 0;
    for (std::int64_t j = 0; j < d.Lk; ++j)
      if (mask[i * mask_rs + j * mask_cs]) key_end[i] = j + 1, query_begin[j] = std::min(query_begin[j], i);
  }
}

template <>
void attention_forward<float>(const AttentionDims& d, const AttentionHead<float>& h, float* weights, float* out,
                              std::int64_t out_rs) {
  if (d.Lq == 1 && d.Lk <= kLanes && d.Lk > 0 && d.dk == kLanes && d.dv == kLanes) {
    float unused_row[kLanes];  // the weights alone: the output row goes here
    return attention_one_query(d, h, weights, out != nullptr ? out : unused_row);
  }
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  const std::int64_t kv = vectors_for(d.Lk), vv = vectors_for(d.dv);
  const float scale = static_cast<float>(d.scale);
  Scratch scratch(static_cast<std::size_t>((d.dk + d.Lq) * kv * kLanes + (d.Lk + d.Lq) * (vv + vectors_for(d.dk)) * kLanes));
  f32x8* s = reinterpret_cast<f32x8*>(scratch.take(d.Lq * kv * kLanes));  // S, then P [Lq][kv]
  const bool by_gemm = products_by_gemm(d);
  const std::int64_t ld = kv * kLanes;  // S's padded row length
  // The keys a block of query rows reaches: S and dP are computed that far, and O sums that far over P.
  auto reach_of_rows = [&](std::int64_t i0, std::int64_t n) {
    const std::int64_t end = keys_end(h, d.Lk, i0, n);
    return ProductRange{0, end, vectors_for(end)};
  };
  if (by_gemm) {  // S = Q K^T, K given as a transposed view, then scaled; by blocks of queries, as far as they reach
    float* sf = reinterpret_cast<float*>(s);
    for (std::int64_t i0 = 0; i0 < d.Lq; i0 += kGemmBlock) {
      const std::int64_t rows = std::min(kGemmBlock, d.Lq - i0), end = keys_end(h, d.Lk, i0, rows);
      if (end > 0) gemm_into(rows, end, d.dk, {h.q + i0 * h.q_rs, h.q_rs, 1}, {h.k, 1, h.k_rs}, sf + i0 * ld, ld);
      for (std::int64_t i = i0; i < i0 + rows; ++i)
        for (std::int64_t j = 0; j < end; ++j) sf[i * ld + j] *= scale;
    }
  } else if (d.Lq >= 4) {  // S = Q K^T as a product: K transposed once, then several query rows at a time
    const VectorRows kt = transposed_vector_rows(h.k, h.k_rs, d.Lk, d.dk, scratch);  // K^T [dk][kv]
    const SmallProduct qkt{d.Lq, d.dk, h.q, h.q_rs, 1, kt};
    product(qkt, [&](std::int64_t i0, std::int64_t n) { return ProductRange{0, d.dk, reach_of_rows(i0, n).vecs}; },
            [&](std::int64_t i, std::int64_t c, f32x8 x) { s[i * kv + c] = x * scale; });
  } else {  // fewer than 4 queries (decoding): dot products with the keys as they are, summed 8 at a time
    const VectorRows q = as_vector_rows(h.q, h.q_rs, d.Lq, d.dk, scratch), k = as_vector_rows(h.k, h.k_rs, d.Lk, d.dk, scratch);
    for (std::int64_t i = 0; i < d.Lq; ++i)
      for (std::int64_t c = 0; c < kv; ++c) {
        f32x8 products[8];  // unrolled, so the eight stay in registers
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) {
          const std::int64_t j = c * kLanes + l;
          f32x8 acc{};
          if (j < d.Lk)
            for (std::int64_t e = 0; e < q.vecs; ++e) acc += q.at(i, e) * k.at(j, e);
          products[l] = acc;
        }
        s[i * kv + c] = lane_sums(products) * scale;
      }
  }
  // Softmax of each row, blocked keys -inf before and exactly 0 after; a row's vectors past its reach are 0 (the
  // products above may have left them unwritten). Rows of one vector (at most 8 keys) go eight at a time:
  // transposed, normalised down the lanes, transposed back.
  std::int64_t i = 0;
  if (kv == 1)
    for (; i + 8 <= d.Lq; i += 8) {
      f32x8 rows[8];
      for (int r = 0; r < 8; ++r) rows[r] = blocked_lanes(h, d.Lk, i + r, 0) ? f32x8{} + minus_inf : s[i + r];
      transpose8(rows);
      softmax_vectors<SoftmaxRows::DownLanes>(rows, d.Lk);
      for (std::int64_t j = d.Lk; j < kLanes; ++j) rows[j] = f32x8{};
      transpose8(rows);
      for (int r = 0; r < 8; ++r) s[i + r] = rows[r];
    }
  for (; i < d.Lq; ++i) {
    f32x8* si = s + i * kv;
    const std::int64_t n = row_vectors(h, kv, i);
    for (std::int64_t c = 0; c < n; ++c) si[c] = blocked_lanes(h, d.Lk, i, c) ? f32x8{} + minus_inf : si[c];
    softmax_vectors<SoftmaxRows::AcrossLanes>(si, n);
    for (std::int64_t c = n; c < kv; ++c) si[c] = f32x8{};
  }
  for (i = 0; i < d.Lq; ++i)
    for (std::int64_t c = 0; c < kv; ++c) store_partial(weights + i * d.Lk + c * kLanes, s[i * kv + c], d.Lk - c * kLanes);
  if (out == nullptr) return;  // the weights alone (backward recomputes them)
  // O = P V, reading P from its padded rows, each block of queries as far as it reaches
  const float* pf = reinterpret_cast<const float*>(s);
  if (by_gemm) {
    for (std::int64_t i0 = 0; i0 < d.Lq; i0 += kGemmBlock) {
      const std::int64_t rows = std::min(kGemmBlock, d.Lq - i0);
      gemm_or_zero(rows, d.dv, keys_end(h, d.Lk, i0, rows), {pf + i0 * ld, ld, 1}, {h.v, h.v_rs, 1}, out + i0 * out_rs,
                   out_rs);
    }
    return;
  }
  const VectorRows v = as_vector_rows(h.v, h.v_rs, d.Lk, d.dv, scratch);  // V [Lk][vv]
  product({d.Lq, d.Lk, pf, ld, 1, v}, [&](std::int64_t i0, std::int64_t n) { return ProductRange{0, reach_of_rows(i0, n).e_end, v.vecs}; },
          [&](std::int64_t i, std::int64_t c, f32x8 x) { store_partial(out + i * out_rs + c * kLanes, x, d.dv - c * kLanes); });
}

void attention_forward_one_query_group(const AttentionDims& d, const AttentionHead<float> (&h)[kHeadGroup],
                                       float* weights, float* const (&out)[kHeadGroup]) {
  constexpr float minus_inf = -std::numeric_limits<float>::infinity();
  assert(one_query_group_applies(d));
  const std::int64_t Lk = d.Lk;
  const float scale = static_cast<float>(d.scale);
  bool any_mask = false;
  f32x8 q[kHeadGroup];
#pragma GCC unroll 8
  for (int i = 0; i < kHeadGroup; ++i) q[i] = load8(h[i].q), any_mask = any_mask || h[i].mask != nullptr;
  // s[j], lane i: head i's score for key j. Each key's eight dot products (one per head) are summed across lanes in
  // one lane_sums, which lands score i in lane i.
  f32x8 s[kMaxGroupedKeys];
  for (std::int64_t j = 0; j < Lk; ++j) {
    f32x8 products[kHeadGroup];
#pragma GCC unroll 8
    for (int i = 0; i < kHeadGroup; ++i) products[i] = q[i] * load8(h[i].k + j * h[i].k_rs);
    f32x8 sj = lane_sums(products) * scale;
    if (any_mask) {
      i32x8 blocked;
      for (int i = 0; i < kHeadGroup; ++i) blocked[i] = h[i].mask != nullptr && !h[i].mask[j * h[i].mask_cs] ? -1 : 0;
      sj = blocked ? f32x8{} + minus_inf : sj;
    }
    s[j] = sj;
  }
  softmax_vectors<SoftmaxRows::DownLanes>(s, Lk);
  // Head i's weights are lane i of every s[j]: a transpose (in registers when Lk = 8).
  const auto* p = reinterpret_cast<const float*>(s);  // p[j * 8 + i]
  if (Lk == kLanes) {
    transpose8x8(p, kLanes, weights, kLanes);
  } else {
    for (int i = 0; i < kHeadGroup; ++i)
      for (std::int64_t j = 0; j < Lk; ++j) weights[i * Lk + j] = p[j * kLanes + i];
  }
  // O_i = sum_j P[i, j] v_i[j]: the weight read as a broadcast from memory (a load, not a shuffle), two FMA chains.
#pragma GCC unroll 8
  for (int i = 0; i < kHeadGroup; ++i) {
    f32x8 even{}, odd{};
    std::int64_t j = 0;
    for (; j + 2 <= Lk; j += 2) {
      even += p[j * kLanes + i] * load8(h[i].v + j * h[i].v_rs);
      odd += p[(j + 1) * kLanes + i] * load8(h[i].v + (j + 1) * h[i].v_rs);
    }
    if (j < Lk) even += p[j * kLanes + i] * load8(h[i].v + j * h[i].v_rs);
    store_partial(out[i], even + odd, kLanes);
  }
}

template <>
void attention_backward<float>(const AttentionDims& d, const AttentionHead<float>& h, const float* weights,
                               const AttentionGrads<float>& g) {
  if (products_by_gemm(d)) return attention_backward_by_gemm(d, h, weights, g);
  const std::int64_t kv = vectors_for(d.Lk), qv = vectors_for(d.dk), vv = vectors_for(d.dv);
  const float scale = static_cast<float>(d.scale);
  Scratch scratch(static_cast<std::size_t>((d.dv + d.Lq) * kv * kLanes + (d.Lk + d.Lq) * qv * kLanes +
                                           d.Lq * vv * kLanes));
  const VectorRows vt = transposed_vector_rows(h.v, h.v_rs, d.Lk, d.dv, scratch);  // V^T [dv][kv]
  const VectorRows k = as_vector_rows(h.k, h.k_rs, d.Lk, d.dk, scratch);            // K [Lk][qv]
  const VectorRows q = as_vector_rows(h.q, h.q_rs, d.Lq, d.dk, scratch);            // Q [Lq][qv]
  const VectorRows dout = as_vector_rows(g.dout, g.dout_rs, d.Lq, d.dv, scratch);   // dO [Lq][vv]
  f32x8* ds = reinterpret_cast<f32x8*>(scratch.take(d.Lq * kv * kLanes));          // dP, then dS [Lq][kv]
  // Blocks of queries take dP and dQ over the keys in their reach; blocks of keys dK and dV over the queries that
  // reach them (the rest of dS and P is 0).
  auto reach_of_queries = [&](std::int64_t i0, std::int64_t n) { return keys_end(h, d.Lk, i0, n); };
  auto reach_of_keys = [&](std::int64_t j0, std::int64_t n) { return queries_begin(h, d.Lq, j0, n); };
  product({d.Lq, d.dv, g.dout, g.dout_rs, 1, vt},  // dP = dO V^T
          [&](std::int64_t i0, std::int64_t n) { return ProductRange{0, d.dv, vectors_for(reach_of_queries(i0, n))}; },
          [&](std::int64_t i, std::int64_t c, f32x8 x) { ds[i * kv + c] = x; });
  softmax_backward_rows(d, h, weights, ds, kv, scale);  // dS, in place over dP
  const float* dsf = reinterpret_cast<const float*>(ds);
  const std::int64_t ld = kv * kLanes;  // dS's padded row length
  product({d.Lq, d.Lk, dsf, ld, 1, k},  // dQ = dS K
          [&](std::int64_t i0, std::int64_t n) { return ProductRange{0, reach_of_queries(i0, n), k.vecs}; },
          [&](std::int64_t i, std::int64_t c, f32x8 x) { store_partial(g.dq + i * g.dq_rs + c * kLanes, x, d.dk - c * kLanes); });
  product({d.Lk, d.Lq, dsf, 1, ld, q},  // dK = dS^T Q
          [&](std::int64_t j0, std::int64_t n) { return ProductRange{reach_of_keys(j0, n), d.Lq, q.vecs}; },
          [&](std::int64_t j, std::int64_t c, f32x8 x) { store_partial(g.dk + j * g.dk_rs + c * kLanes, x, d.dk - c * kLanes); });
  product({d.Lk, d.Lq, weights, 1, d.Lk, dout},  // dV = P^T dO
          [&](std::int64_t j0, std::int64_t n) { return ProductRange{reach_of_keys(j0, n), d.Lq, dout.vecs}; },
          [&](std::int64_t j, std::int64_t c, f32x8 x) { store_partial(g.dv + j * g.dv_rs + c * kLanes, x, d.dv - c * kLanes); });
}

}  // namespace cppgrad::kernels
