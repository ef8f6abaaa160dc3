#include "nn/attention.h"

#include <stdexcept>

#include "core/ops/attention.h"
#include "core/ops/matmul.h"

namespace cppgrad::nn {

AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    throw std::invalid_argument("scaled_dot_product_attention: q, k, v need at least 2 dims, got q " + shape_str(q.shape()) +
                                ", k " + shape_str(k.shape()) + ", v " + shape_str(v.shape()));
  if (q.shape().back() != k.shape().back())
    throw std::invalid_argument("scaled_dot_product_attention: q and k must share d_k: q " + shape_str(q.shape()) +
                                " vs k " + shape_str(k.shape()));
  if (k.shape()[k.dim() - 2] != v.shape()[v.dim() - 2])
    throw std::invalid_argument("scaled_dot_product_attention: k and v must have the same length Lk: k " +
                                shape_str(k.shape()) + " vs v " + shape_str(v.shape()));
  const Tensor weights = attention_weights(q, k, mask, "scaled_dot_product_attention");  // [.., Lq, Lk]
  return {matmul(weights, v), weights};                                                    // [.., Lq, dv]
}

Tensor without_head_dim(const Tensor& mask) {
  return mask.defined() && mask.dim() == 4 ? mask.squeeze(1) : mask;
}

Tensor causal_mask(std::int64_t L) {
  Tensor m = Tensor::zeros({L, L}, DType::Bool);
  bool* p = m.mutable_data<bool>();
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = 0; j <= i; ++j) p[i * L + j] = true;
  return m;
}

Tensor key_padding_mask_from_lengths(const Tensor& lengths, std::int64_t Lk) {
  if (lengths.dtype() != DType::Int64 || lengths.dim() != 1)
    throw std::invalid_argument("key_padding_mask_from_lengths: lengths must be a 1-D int64 tensor, got " +
                                shape_str(lengths.shape()) + " " + dtype_name(lengths.dtype()));
  const auto len = lengths.to_vector<std::int64_t>();
  const std::int64_t B = static_cast<std::int64_t>(len.size());
  Tensor m = Tensor::zeros({B, 1, 1, Lk}, DType::Bool);
  bool* p = m.mutable_data<bool>();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t j = 0; j < Lk; ++j) p[b * Lk + j] = j < len[b];
  return m;
}

Tensor key_padding_mask_from_ids(const Tensor& ids, std::int64_t pad_id) {
  if (ids.dtype() != DType::Int64 || ids.dim() != 2)
    throw std::invalid_argument("key_padding_mask_from_ids: ids must be a [B, Lk] int64 tensor, got " +
                                shape_str(ids.shape()) + " " + dtype_name(ids.dtype()));
  const std::int64_t B = ids.shape()[0], Lk = ids.shape()[1];
  const auto v = ids.to_vector<std::int64_t>();
  Tensor m = Tensor::zeros({B, 1, 1, Lk}, DType::Bool);
  bool* p = m.mutable_data<bool>();
  for (std::int64_t i = 0; i < B * Lk; ++i) p[i] = v[i] != pad_id;
  return m;
}

void check_heads_divide(std::int64_t heads, std::int64_t width, const std::string& heads_name,
                        const std::string& width_name) {
  if (heads < 1 || width % heads != 0)
    throw std::invalid_argument(heads_name + " " + std::to_string(heads) + " does not divide " + width_name + " " +
                                std::to_string(width) + ": each head gets " + width_name + " / " + heads_name + " dims");
}

}  // namespace cppgrad::nn
