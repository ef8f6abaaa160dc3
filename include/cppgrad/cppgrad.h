#pragma once
// cppgrad's public API in one include: tensors and their ops, the autograd engine, gradient checking,
// safetensors I/O, the nn modules, the optimizers, the reversal data set and text data.
//
//   #include <cppgrad/cppgrad.h>
//   using namespace cppgrad;
//
// Built in the source tree or installed (`cmake --install build --prefix P`, then find_package(cppgrad) or
// pkg-config cppgrad), the same line works. examples/consumer/ is a small program that uses nothing else.
#include "cppgrad/version.h"

// core: tensors, ops, autograd (and its functional API: jacobian, hessian, vjp, jvp, hvp), reference mode, files
// written whole, user text in error messages, configs declared once as rows (flags, bounds, JSON). tests/docs/check_umbrella.cmake fails when a header of core/ or nn/ is
// missing here, and lists the few that are not for users.
#include "core/atomic_file.h"
#include "core/autograd.h"
#include "core/config_table.h"
#include "core/dispatch.h"
#include "core/dtype.h"
#include "core/execution_context.h"
#include "core/functional.h"
#include "core/generator.h"
#include "core/gradcheck.h"
#include "core/graph_dot.h"
#include "core/bfloat16.h"
#include "core/precision.h"
#include "core/half.h"
#include "core/message_text.h"
#include "core/number_text.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "core/safetensors.h"
#include "core/shape.h"
#include "core/tensor.h"

// nn: modules built from the ops
#include "nn/additive_attention.h"
#include "nn/attention.h"
#include "nn/attention_module.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/feed_forward.h"
#include "nn/generate.h"
#include "nn/gpt.h"
#include "nn/gpt_hf.h"
#include "nn/init.h"
#include "nn/kv_cache.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "nn/lora.h"
#include "nn/module.h"
#include "nn/multi_head_attention.h"
#include "nn/multiplicative_attention.h"
#include "nn/positional.h"
#include "nn/sampling.h"
#include "nn/self_attention.h"
#include "nn/seq2seq.h"
#include "nn/transformer.h"

// optim: optimizers, gradient clipping, learning-rate schedules
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "optim/sgd.h"

// data: the seeded sequence-reversal task; text for next-character models (UTF-8, a character tokenizer, corpora
// of lines or running text, their batches, the count-based bigram baseline); byte-level BPE (GPT-2's and trained)
#include "data/bigram.h"
#include "data/bpe.h"
#include "data/bpe_basic.h"
#include "data/bpe_ranks.h"
#include "data/bpe_train.h"
#include "data/char_tokenizer.h"
#include "data/corpus_rows.h"
#include "data/gpt2_vocab.h"
#include "data/reversal.h"
#include "data/text_corpus.h"
#include "data/text_split.h"
#include "data/token_batch.h"
#include "data/token_ids_text.h"
#include "data/token_labels.h"
#include "data/tokenizer.h"
#include "data/utf8.h"
