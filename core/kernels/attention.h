#pragma once
// Scaled dot-product attention for one head, forward and backward, on raw memory: the kernels behind the fused
// attention op (core/ops/attention.cpp). One head is small (the reversal model's are 8 queries x 8 keys x 8 dims),
// so the whole computation for a head stays in L1 and the op is one graph node instead of six.
//
//   S = scale * Q K^T           [Lq, Lk]
//   S[i, j] = -inf where the mask blocks key j for query i
//   P = softmax(S) over keys    [Lq, Lk]   (a row with every key blocked is all zeros)
//   O = P V                     [Lq, dv]
//
// Backward, given dO:
//   dP = dO V^T;  dS = P * (dP - rowsum(P * dP));  dQ = scale * dS K;  dK = scale * dS^T Q;  dV = P^T dO
//
// float32 only, on 8-lane vectors (the head's rows padded to whole vectors). The readable definition is the op's
// (core/ops/attention.cpp, which float64 always runs); KernelsMatchDefinitions holds the two equal, and the raw
// kernel tests hold these against plain loops (tests/core/attention_reference.h).
#include <cstdint>

namespace cppgrad::kernels {

// Below about this many multiply-adds (batch x Lq x Lk x (dk + dv)) the op stays on one thread: waking a second
// costs more than it saves. The reversal model's calls are 2^18.
inline constexpr std::int64_t kAttentionParallelGrain = 1 << 20;

struct AttentionDims {
  std::int64_t Lq, Lk, dk, dv;
  double scale;
};

// One head's operands. Every matrix has unit column stride and rows `*_rs` elements apart.
template <typename T>
struct AttentionHead {
  const T* q; std::int64_t q_rs;   // Q [Lq, dk]
  const T* k; std::int64_t k_rs;   // K [Lk, dk]
  const T* v; std::int64_t v_rs;   // V [Lk, dv]
  const bool* mask = nullptr;      // may query i attend to key j: mask[i * mask_rs + j * mask_cs]; null: always
  std::int64_t mask_rs = 0, mask_cs = 0;
  // How far the mask lets each query reach (attention_reach), or null: every key in reach of every query. With it
  // the kernels skip the blocks of the products that only blocked pairs fill (the causal mask's upper triangle).
  const std::int64_t* key_end = nullptr;      // [Lq]
  const std::int64_t* query_begin = nullptr;  // [Lk]
};

// The reach of a mask: key_end[i] = 1 + the last key query i may attend to (0: none), query_begin[j] = the first
// query that may attend to key j (Lq: none). Every pair outside [query_begin[j], Lq) x [0, key_end[i]) is blocked,
// so its weight is exactly 0 and leaving it out of a product changes nothing. For the causal mask: key_end[i] =
// i + 1, query_begin[j] = j. The batch driver computes it once per call for a mask every head shares.
void attention_reach(const AttentionDims& d, const bool* mask, std::int64_t mask_rs, std::int64_t mask_cs,
                     std::int64_t* key_end, std::int64_t* query_begin);

// Forward: writes P [Lq, Lk] (contiguous) and O [Lq, dv] (rows out_rs apart); P alone when out is null (the same
// bits: backward's recompute).
template <typename T>
void attention_forward(const AttentionDims& d, const AttentionHead<T>& h, T* weights, T* out, std::int64_t out_rs);

// Eight heads with one query each (a decoding step), computed together: lane i of every vector belongs to head i, so
// the softmax runs down the lanes (no reductions across lanes) and the eight heads' dependent chains overlap instead
// of each waiting on its own. For float heads with dk = dv = 8 and 1 <= Lk <= kMaxGroupedKeys
// (one_query_group_applies). Writes P as weights [8][Lk] (head i's row at weights + i * Lk) and head i's output row
// at out[i]; the same values as attention_forward head by head, within float rounding.
inline constexpr int kHeadGroup = 8;
inline constexpr std::int64_t kMaxGroupedKeys = 64;
inline bool one_query_group_applies(const AttentionDims& d) {
  return d.Lq == 1 && d.dk == 8 && d.dv == 8 && d.Lk >= 1 && d.Lk <= kMaxGroupedKeys;
}
void attention_forward_one_query_group(const AttentionDims& d, const AttentionHead<float> (&heads)[kHeadGroup],
                                       float* weights, float* const (&out)[kHeadGroup]);

// Backward: reads P (the forward's weights, or the same computed again) and dO [Lq, dv] (rows dout_rs apart);
// overwrites dQ [Lq, dk], dK [Lk, dk] and dV [Lk, dv], each contiguous-rowed with its own row stride.
template <typename T>
struct AttentionGrads {
  const T* dout; std::int64_t dout_rs;
  T* dq; std::int64_t dq_rs;
  T* dk; std::int64_t dk_rs;
  T* dv; std::int64_t dv_rs;
};

template <typename T>
void attention_backward(const AttentionDims& d, const AttentionHead<T>& h, const T* weights, const AttentionGrads<T>& g);

}  // namespace cppgrad::kernels
