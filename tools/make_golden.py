#!/usr/bin/env python3
"""PyTorch reference values ("golden cases") for cppgrad's parity tests.

Every case is one safetensors file: its inputs and parameters, the outputs PyTorch computes, an upstream gradient
for each differentiated output, and the gradients of loss = sum_Y sum(Y * upstream.Y) with respect to every input
and parameter, all in float64. The metadata names the `kind` (the parity runner's handler), the configuration,
and how the file was made (generator, seed, variant, torch version). tests/golden/README.md describes the format.

Regenerate the committed set (Debian 12: apt-get install python3-torch):

    /usr/bin/python3 tools/make_golden.py --out tests/golden

and a second set of other shapes and seeds, to check that the tests follow whatever directory they are given:

    /usr/bin/python3 tools/make_golden.py --out /tmp/golden-alt --variant alt --seed 7
    CPPGRAD_GOLDEN_DIR=/tmp/golden-alt ctest --test-dir build --output-on-failure

The files are written deterministically: the same seed, variant and torch build give the same bytes.
"""

import argparse
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

# ------------------------------------------------------------------------------------------------ writing

DTYPE_CODES = {torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL"}


def write_safetensors(path, tensors, metadata):
    """The safetensors layout: 8-byte little-endian header length, JSON header, data in name order."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        data = t.numpy().tobytes() if t.dtype != torch.bool else t.to(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": DTYPE_CODES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {k: str(v) for k, v in sorted(metadata.items())}
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)  # the data section starts 8-byte aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


class Case:
    """Collects one case's tensors under the runner's names, then backpropagates the upstream gradients."""

    def __init__(self, kind, **config):
        self.kind, self.config, self.tensors = kind, config, {}
        self.leaves = {}  # name -> leaf requiring grad

    def input(self, name, t, grad=True):
        if grad and t.is_floating_point():
            t = t.clone().requires_grad_(True)
            self.leaves["input." + name] = t
        self.tensors["input." + name] = t
        return t

    def params(self, module):
        for name, p in module.named_parameters():
            self.tensors["param." + name] = p.detach().clone()
            self.leaves["param." + name] = p
        return module

    def finish(self, gen, outputs, differentiated=None):
        """outputs: name -> tensor. Those in `differentiated` (all by default) get an upstream, and a scalar
        output without one is the loss itself."""
        differentiated = list(outputs) if differentiated is None else differentiated
        loss = 0
        for name, y in outputs.items():
            self.tensors["output." + name] = y.detach().clone()
            if name not in differentiated:
                continue
            if y.dim() == 0:
                loss = loss + y
            else:
                up = torch.randn(y.shape, generator=gen)
                self.tensors["upstream." + name] = up
                loss = loss + (y * up).sum()
        loss.backward()
        for name, leaf in self.leaves.items():
            g = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            self.tensors["grad." + name] = g.detach().clone()
        return self


# ------------------------------------------------------------------------------------------------ the models
# Written here as cppgrad defines them (nn/*.cpp), with PyTorch's parameter names.

class Linear(torch.nn.Module):  # weight [out, in], bias [out]: x @ W^T + b, initialised U(-1/sqrt(in), 1/sqrt(in))
    def __init__(self, n_in, n_out, bias=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n_out, n_in))
        self.bias = torch.nn.Parameter(torch.empty(n_out)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


def init_(module, gen, scale=1.0):
    """Every parameter uniform in [-scale, scale) from `gen` (deterministic), LayerNorm weights near 1."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            u = (torch.rand(p.shape, generator=gen) * 2 - 1) * scale
            p.copy_(1 + 0.5 * u if name.endswith("norm1.weight") or name.endswith("norm2.weight")
                    or name.endswith("norm3.weight") or name == "weight_ln" else u)
    return module


def attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k), masked where mask is false) v; returns (output, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = scores.softmax(-1)
    return w @ v, w


def causal(L):
    return torch.tril(torch.ones(L, L, dtype=torch.bool))


class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (Linear(d_model, d_model, False) for _ in range(4))

    def forward(self, q_in, kv_in, mask=None):
        B, Lq, D = q_in.shape
        split = lambda x: x.view(B, x.shape[1], self.h, D // self.h).transpose(1, 2)  # [B, H, L, dh]
        out, w = attention(split(self.W_q(q_in)), split(self.W_k(kv_in)), split(self.W_v(kv_in)), mask)
        return self.W_o(out.transpose(1, 2).reshape(B, Lq, D)), w


class FeedForward(torch.nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.lin1, self.lin2 = Linear(d_model, d_ff), Linear(d_ff, d_model)

    def forward(self, x):
        return self.lin2(torch.relu(self.lin1(x)))


class EncoderLayer(torch.nn.Module):  # post-LN: x = norm1(x + attn(x)); x = norm2(x + ffn(x))
    def __init__(self, d_model, n_heads, d_ff, eps):
        super().__init__()
        self.self_attn, self.ffn = MultiHeadAttention(d_model, n_heads), FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d_model, eps=eps), torch.nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, mask)[0])
        return self.norm2(x + self.ffn(x))


class DecoderLayer(torch.nn.Module):  # causal self-attention, cross-attention to memory, feed-forward; post-LN
    def __init__(self, d_model, n_heads, d_ff, eps):
        super().__init__()
        self.self_attn, self.cross_attn = MultiHeadAttention(d_model, n_heads), MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (torch.nn.LayerNorm(d_model, eps=eps) for _ in range(3))

    def forward(self, x, memory, memory_mask=None):
        x = self.norm1(x + self.self_attn(x, x, causal(x.shape[1]))[0])
        x = self.norm2(x + self.cross_attn(x, memory, memory_mask)[0])
        return self.norm3(x + self.ffn(x))


class Seq2Seq(torch.nn.Module):  # the reversal model: learned positions, encoder and decoder stacks, output layer
    def __init__(self, vocab, d_model, n_heads, n_enc, n_dec, d_ff, max_len, eps):
        super().__init__()
        self.src_embed = torch.nn.Embedding(vocab, d_model)
        self.src_pos = torch.nn.Embedding(max_len, d_model)
        self.tgt_embed = torch.nn.Embedding(vocab + 1, d_model)  # + BOS
        self.tgt_pos = torch.nn.Embedding(max_len, d_model)
        self.encoder = torch.nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, eps) for _ in range(n_enc))
        self.decoder = torch.nn.ModuleList(DecoderLayer(d_model, n_heads, d_ff, eps) for _ in range(n_dec))
        self.out = Linear(d_model, vocab)

    def forward(self, src, dec_in):
        pos = lambda table, L: table(torch.arange(L))
        x = self.src_embed(src) + pos(self.src_pos, src.shape[1])
        for layer in self.encoder:
            x = layer(x)
        y = self.tgt_embed(dec_in) + pos(self.tgt_pos, dec_in.shape[1])
        for layer in self.decoder:
            y = layer(y, x)
        return self.out(y)


class NanoGPTAttention(torch.nn.Module):  # nanoGPT's CausalSelfAttention (dropout 0): fused qkv, output projection
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = torch.nn.Linear(n_embd, 3 * n_embd), torch.nn.Linear(n_embd, n_embd), n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y, _ = attention(q, k, v, causal(T))
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class NanoGPTMLP(torch.nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc, self.c_proj = torch.nn.Linear(n_embd, 4 * n_embd), torch.nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class NanoGPTBlock(torch.nn.Module):  # pre-LN: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1, self.attn = torch.nn.LayerNorm(n_embd), NanoGPTAttention(n_embd, n_head)
        self.ln_2, self.mlp = torch.nn.LayerNorm(n_embd), NanoGPTMLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(torch.nn.Module):  # nanoGPT's GPT, its module names and its weight tying
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd):
        super().__init__()
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(vocab_size, n_embd), wpe=torch.nn.Embedding(block_size, n_embd),
            drop=torch.nn.Dropout(0.0), h=torch.nn.ModuleList(NanoGPTBlock(n_embd, n_head) for _ in range(n_layer)),
            ln_f=torch.nn.LayerNorm(n_embd)))
        self.lm_head = torch.nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets):
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.size(1))))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


# ------------------------------------------------------------------------------------------------ the cases
# Each returns {file stem: Case}. `S` holds the variant's shapes.

def elementwise_cases(gen, S):
    rand = lambda *shape: torch.randn(shape, generator=gen)
    out = {}
    for kind in ("softmax", "log_softmax"):
        c = Case(kind, dim=S["softmax_dim"])
        x = c.input("input", rand(*S["softmax"]))
        out[kind] = c.finish(gen, {"output": getattr(torch, kind)(x, dim=S["softmax_dim"])})

    c = Case("cross_entropy", ignore_index=0, reduction="mean")
    logits = c.input("input", rand(*S["ce_logits"]) * 2)
    n_classes = S["ce_logits"][1]
    target = torch.randint(0, n_classes, S["ce_target"], generator=gen)
    target.view(-1)[0] = 0  # at least one ignored target, and (below) at least one counted
    target.view(-1)[-1] = n_classes - 1
    c.input("target", target)
    out["cross_entropy_ignore_index"] = c.finish(gen, {"output": F.cross_entropy(logits, target, ignore_index=0)})

    c = Case("broadcast_mul_add")
    a, b, cc = (c.input(n, rand(*S["bma"][n])) for n in ("a", "b", "c"))
    out["broadcast_mul_add"] = c.finish(gen, {"output": a * b + cc})

    c = Case("matmul_batched_broadcast")
    a, b = c.input("a", rand(*S["mm_a"])), c.input("b", rand(*S["mm_b"]))
    out["matmul_batched_broadcast"] = c.finish(gen, {"output": a @ b})

    c = Case("matmul_transposed_view")
    a, b = c.input("a", rand(*S["mt_a"])), c.input("b", rand(*S["mt_b"]))
    out["matmul_transposed_view"] = c.finish(gen, {"output": a @ b.transpose(-2, -1)})
    return out


def layer_cases(gen, S):
    rand = lambda *shape: torch.randn(shape, generator=gen)
    out = {}
    n_in, n_out, bias = S["linear"]
    c = Case("linear", in_features=n_in, out_features=n_out, bias=int(bias))
    lin = c.params(init_(Linear(n_in, n_out, bias), gen))
    x = c.input("input", rand(*S["linear_x"], n_in))
    out["linear"] = c.finish(gen, {"output": lin(x)})

    d = S["layer_norm"][-1]
    c = Case("layer_norm", normalized_shape=d, eps="1e-05")
    ln = torch.nn.LayerNorm(d, eps=1e-5)
    with torch.no_grad():  # affine parameters that are not the identity, so they are really checked
        ln.weight.copy_(1 + 0.5 * (torch.rand(d, generator=gen) * 2 - 1))
        ln.bias.copy_(torch.rand(d, generator=gen) - 0.5)
    c.params(ln)
    x = c.input("input", rand(*S["layer_norm"]) * 2 + 0.5)
    out["layer_norm"] = c.finish(gen, {"output": ln(x)})

    V, D = S["embedding"]
    c = Case("embedding", num_embeddings=V, embedding_dim=D)
    emb = torch.nn.Embedding(V, D)
    with torch.no_grad():
        emb.weight.copy_(rand(V, D))
    c.params(emb)
    ids = c.input("indices", torch.randint(0, V, S["embedding_ids"], generator=gen))
    out["embedding"] = c.finish(gen, {"output": emb(ids)})
    return out


def attention_cases(gen, S):
    rand = lambda *shape: torch.randn(shape, generator=gen)
    out = {}
    c = Case("scaled_dot_product_attention", mask="causal")
    q, k, v = (c.input(n, rand(*S["sdpa_causal"])) for n in ("query", "key", "value"))
    mask = c.input("mask", causal(S["sdpa_causal"][-2]))
    o, w = attention(q, k, v, mask)
    out["sdpa_causal"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, Lq, Lk, dk, dv = S["sdpa_padding"]
    c = Case("scaled_dot_product_attention", mask="key_padding")
    q, k, v = c.input("query", rand(B, Lq, dk)), c.input("key", rand(B, Lk, dk)), c.input("value", rand(B, Lk, dv))
    mask = torch.ones(B, 1, Lk, dtype=torch.bool)
    mask[-1, 0, Lk - 2:] = False  # the last batch's last two keys are padding
    c.input("mask", mask)
    o, w = attention(q, k, v, mask)
    out["sdpa_key_padding"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    c = Case("scaled_dot_product_attention")
    q, k, v = c.input("query", rand(1, 2)), c.input("key", rand(3, 2)), c.input("value", rand(3, 2))
    o, w = attention(q, k, v)
    out["sdpa_worked_example"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, L, D, dk, dv = S["self_attention"]
    c = Case("self_attention", d_model=D, d_k=dk, d_v=dv)
    m = torch.nn.Module()
    m.W_q, m.W_k, m.W_v = Linear(D, dk, False), Linear(D, dk, False), Linear(D, dv, False)
    c.params(init_(m, gen, 0.5))
    x = c.input("input", rand(B, L, D))
    o, w = attention(m.W_q(x), m.W_k(x), m.W_v(x))
    out["self_attention"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, L, D = S["causal_self_attention"]
    c = Case("causal_self_attention", d_model=D)
    m = torch.nn.Module()
    m.W_q, m.W_k, m.W_v = (Linear(D, D, False) for _ in range(3))
    c.params(init_(m, gen, 0.5))
    x = c.input("input", rand(B, L, D))
    o, w = attention(m.W_q(x), m.W_k(x), m.W_v(x), causal(L))
    out["causal_self_attention"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, L, D, H = S["mha_self"]
    c = Case("multi_head_attention", d_model=D, n_heads=H, mask="causal")
    mha = c.params(init_(MultiHeadAttention(D, H), gen, 0.5))
    x = c.input("input", rand(B, L, D))
    o, w = mha(x, x, causal(L))
    out["multi_head_attention_causal_self"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, Lq, Lk, D, H = S["mha_cross"]
    c = Case("multi_head_attention", d_model=D, n_heads=H, mask="key_padding")
    mha = c.params(init_(MultiHeadAttention(D, H), gen, 0.5))
    q, kv = c.input("query", rand(B, Lq, D)), c.input("key_value", rand(B, Lk, D))
    mask = torch.ones(B, 1, 1, Lk, dtype=torch.bool)
    mask[0, 0, 0, Lk - 1] = False
    mask[-1, 0, 0, 1:] = False  # one batch sees only its first key
    c.input("mask", mask)
    o, w = mha(q, kv, mask)
    out["multi_head_attention_cross"] = c.finish(gen, {"output": o, "weights": w}, ["output"])

    B, S_, dq, dk, dv, dh = S["bahdanau"]
    c = Case("additive_attention", d_query=dq, d_key=dk, d_hidden=dh)
    m = torch.nn.Module()
    m.W1, m.W2, m.v = Linear(dq, dh, False), Linear(dk, dh, False), Linear(dh, 1, False)
    c.params(init_(m, gen, 0.5))
    q, k, v = c.input("query", rand(B, 1, dq)), c.input("key", rand(B, S_, dk)), c.input("value", rand(B, S_, dv))
    w = m.v(torch.tanh(m.W1(q).unsqueeze(2) + m.W2(k).unsqueeze(1))).squeeze(-1).softmax(-1)  # [B, 1, S]
    out["additive_attention"] = c.finish(gen, {"output": (w @ v).squeeze(1), "weights": w.squeeze(1)}, ["output"])

    c = Case("multiplicative_attention", d_query=dq, d_key=dk)
    m = torch.nn.Module()
    m.W = Linear(dk, dq, False)
    c.params(init_(m, gen, 0.5))
    q, k, v = c.input("query", rand(B, 1, dq)), c.input("key", rand(B, S_, dk)), c.input("value", rand(B, S_, dv))
    w = (q @ m.W(k).transpose(-2, -1)).softmax(-1)  # [B, 1, S]
    out["multiplicative_attention"] = c.finish(gen, {"output": (w @ v).squeeze(1), "weights": w.squeeze(1)},
                                               ["output"])
    return out


def transformer_cases(gen, S):
    rand = lambda *shape: torch.randn(shape, generator=gen)
    out = {}
    B, L, Lm, D, H, dff = S["layers"]
    c = Case("transformer_encoder_layer", d_model=D, n_heads=H, d_ff=dff, eps="1e-05")
    enc = c.params(init_(EncoderLayer(D, H, dff, 1e-5), gen, 0.5))
    x = c.input("input", rand(B, Lm, D))
    out["transformer_encoder_layer"] = c.finish(gen, {"output": enc(x)})

    c = Case("transformer_decoder_layer", d_model=D, n_heads=H, d_ff=dff, eps="1e-05", self_mask="causal")
    dec = c.params(init_(DecoderLayer(D, H, dff, 1e-5), gen, 0.5))
    x, memory = c.input("input", rand(B, L, D)), c.input("memory", rand(B, Lm, D))
    out["transformer_decoder_layer"] = c.finish(gen, {"output": dec(x, memory)})

    cfg = S["seq2seq"]
    # Adam's step is lr * m / (sqrt(v) + eps): near a zero gradient entry (there are always a few among thousands)
    # it moves by lr / eps per unit of gradient, so with PyTorch's eps 1e-8 float32 rounding of the gradient
    # (~1e-9 here) moves the weight by ~1e-3 and the float32 run cannot be compared with float64 there. With eps
    # 1e-4 every step is a smooth function of the gradient (sensitivity 100: ~1e-7), and typical entries (|g| ~ 4e-3)
    # still take Adam's normalised step.
    vocab, B, L, lr, eps, steps = cfg["vocab"], cfg["batch"], cfg["len"], 0.01, 1e-4, 3
    dims = dict(d_model=cfg["d_model"], n_heads=cfg["n_heads"], n_encoder_layers=cfg["layers"],
                n_decoder_layers=cfg["layers"], d_ff=cfg["d_ff"], max_len=cfg["max_len"])
    c = Case("seq2seq_reversal", vocab=vocab, bos=vocab, eps="1e-05", adam_lr=lr, adam_eps=eps, adam_steps=steps,
             note="dec_in = [BOS] + tgt[:-1]; tgt_embed has vocab+1 rows; loss = mean cross-entropy over all B*L "
                  "tokens", **dims)
    model = Seq2Seq(vocab, dims["d_model"], dims["n_heads"], dims["n_encoder_layers"], dims["n_decoder_layers"],
                    dims["d_ff"], dims["max_len"], 1e-5)
    init_(model, gen, 0.3)
    c.params(model)
    src = torch.randint(1, vocab, (B, L), generator=gen)
    tgt = src.flip(1)
    dec_in = torch.cat([torch.full((B, 1), vocab), tgt[:, :-1]], dim=1)
    for name, t in (("src", src), ("dec_in", dec_in), ("tgt", tgt)):
        c.input(name, t)
    logits = model(src, dec_in)
    loss = F.cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))
    c.finish(gen, {"logits": logits, "loss": loss}, ["loss"])
    # Three Adam steps on the same batch, from the same initial weights.
    trained = Seq2Seq(vocab, dims["d_model"], dims["n_heads"], dims["n_encoder_layers"], dims["n_decoder_layers"],
                      dims["d_ff"], dims["max_len"], 1e-5)
    trained.load_state_dict(model.state_dict())
    adam = torch.optim.Adam(trained.parameters(), lr=lr, eps=eps)
    for _ in range(steps):
        adam.zero_grad()
        F.cross_entropy(trained(src, dec_in).reshape(-1, vocab), tgt.reshape(-1)).backward()
        adam.step()
    for name, p in trained.named_parameters():
        c.tensors["after_adam." + name] = p.detach().clone()
    out["seq2seq_reversal"] = c
    return out


def optimizer_cases(gen, S):
    out = {}
    n, steps = S["optim"]
    settings = {
        "sgd_momentum": (torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
        "adam": (torch.optim.Adam, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8)),
        "adamw": (torch.optim.AdamW, dict(lr=0.01, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.1)),
    }
    for kind, (cls, kw) in settings.items():
        meta = {k: v for k, v in kw.items() if k != "betas"}
        if "betas" in kw:
            meta["beta1"], meta["beta2"] = kw["betas"]
        c = Case(kind, steps=steps, **meta)
        p = torch.nn.Parameter(torch.randn(n, generator=gen))
        c.tensors["param.initial"] = p.detach().clone()
        opt = cls([p], **kw)
        for s in range(steps):
            p.grad = torch.randn(n, generator=gen)
            c.tensors[f"grad.step{s}"] = p.grad.clone()
            opt.step()
            c.tensors[f"param.after_step{s}"] = p.detach().clone()
        out[kind] = c

    c = Case("clip_grad_norm", max_norm="1.0", norm_type="2")
    params = [torch.nn.Parameter(torch.zeros(shape)) for shape in S["clip"]]
    for i, p in enumerate(params):
        p.grad = torch.randn(p.shape, generator=gen)
        c.tensors[f"grad.before{i}"] = p.grad.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm=1.0, norm_type=2)
    c.tensors["output.total_norm"] = total.detach().clone()
    for i, p in enumerate(params):
        c.tensors[f"grad.after{i}"] = p.grad.clone()
    out["clip_grad_norm"] = c
    return out


def gpt_cases(gen, S):
    """nanoGPT's model on a padded batch of lines (makemore's shape): row b reads [0, c1..cn] and predicts
    [c1..cn, 0], then padding (token 0, target -1, not counted). Logits, loss, every gradient, three AdamW steps."""
    cfg = S["gpt"]
    V, bs, L, nh, C, lengths = cfg["vocab"], cfg["block_size"], cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["lengths"]
    # eps 1e-4 for the float32 run, as the seq2seq case explains; weight decay on every parameter (cppgrad's AdamW
    # has one group)
    lr, betas, eps, wd, steps = 0.01, (0.9, 0.99), 1e-4, 0.1, 3
    model = NanoGPT(V, bs, L, nh, C)
    with torch.no_grad():  # values far from GPT-2's 0.02 init, so every gradient is well above the tolerances
        for name, p in model.named_parameters():
            u = (torch.rand(p.shape, generator=gen) * 2 - 1) * 0.3
            p.copy_(1 + u if name.endswith("ln_1.weight") or name.endswith("ln_2.weight")
                    or name.endswith("ln_f.weight") else u)
    state = [[name, list(t.shape)] for name, t in model.state_dict().items()]  # lm_head.weight included
    c = Case("gpt", vocab_size=V, block_size=bs, n_layer=L, n_head=nh, n_embd=C, adamw_lr=lr, adamw_beta1=betas[0],
             adamw_beta2=betas[1], adamw_eps=eps, adamw_weight_decay=wd, adamw_steps=steps,
             state_dict=json.dumps(state, separators=(",", ":")),
             note="loss = mean cross-entropy over targets != -1; lm_head.weight is transformer.wte.weight")
    c.params(model)  # named_parameters: the tied weight once, as transformer.wte.weight
    T = max(lengths) + 1
    idx = torch.zeros(len(lengths), T, dtype=torch.int64)
    targets = torch.full((len(lengths), T), -1, dtype=torch.int64)
    for b, n in enumerate(lengths):
        chars = torch.randint(1, V, (n,), generator=gen)
        idx[b, 1:n + 1] = chars
        targets[b, :n] = chars
        targets[b, n] = 0
    c.input("idx", idx)
    c.input("targets", targets)
    logits, loss = model(idx, targets)
    c.finish(gen, {"logits": logits, "loss": loss}, ["loss"])
    trained = NanoGPT(V, bs, L, nh, C)
    trained.load_state_dict(model.state_dict())
    opt = torch.optim.AdamW(trained.parameters(), lr=lr, betas=betas, eps=eps, weight_decay=wd)
    for _ in range(steps):
        opt.zero_grad()
        trained(idx, targets)[1].backward()
        opt.step()
    for name, p in trained.named_parameters():
        c.tensors["after_adamw." + name] = p.detach().clone()
    return {"gpt": c}


class LoRA(torch.nn.Module):  # nn/lora.h: the change (alpha / r) x A^T B^T alone, parameters named A and B
    def __init__(self, n_in, n_out, r, alpha):
        super().__init__()
        self.A, self.B = torch.nn.Parameter(torch.zeros(r, n_in)), torch.nn.Parameter(torch.zeros(n_out, r))
        self.scaling = alpha / r

    def forward(self, x):
        return F.linear(F.linear(x, self.A), self.B) * self.scaling


def add_lora(model, targets, r, alpha):
    """peft's get_peft_model in a few lines: freeze everything, then give each Linear named by a target (its whole
    dotted name, or its end after a dot) a LoRA at `.lora`, added to its output."""
    model.requires_grad_(False)
    for name, m in list(model.named_modules()):
        if isinstance(m, torch.nn.Linear) and any(name == t or name.endswith("." + t) for t in targets):
            m.lora = LoRA(m.in_features, m.out_features, r, alpha)
            m.forward = (lambda m: lambda x: F.linear(x, m.weight, m.bias) + m.lora(x))(m)


def lora_cases(gen, S):
    """The gpt case's model with LoRA (rank r, alpha) on GPT-2's four matrices of every block: logits, loss, the
    adapters' gradients (the frozen weights get none), then ten AdamW steps on the adapters alone: the loss before
    each step and the adapters after the last."""
    cfg, (r, alpha) = S["gpt"], S["lora"]
    V, bs, L, nh, C, lengths = cfg["vocab"], cfg["block_size"], cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["lengths"]
    lr, betas, eps, wd, steps = 0.01, (0.9, 0.99), 1e-4, 0.1, 10
    targets = ["c_attn", "attn.c_proj", "c_fc", "mlp.c_proj"]
    model = NanoGPT(V, bs, L, nh, C)
    add_lora(model, targets, r, alpha)
    with torch.no_grad():  # every value drawn, B too (its zero start would leave A's first gradient zero)
        for name, p in model.named_parameters():
            u = (torch.rand(p.shape, generator=gen) * 2 - 1) * 0.3
            p.copy_(1 + u if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")) else u)
    c = Case("gpt_lora", vocab_size=V, block_size=bs, n_layer=L, n_head=nh, n_embd=C, lora_rank=r, lora_alpha=alpha,
             lora_targets=",".join(targets), adamw_lr=lr, adamw_beta1=betas[0], adamw_beta2=betas[1], adamw_eps=eps,
             adamw_weight_decay=wd, adamw_steps=steps,
             note="every parameter stored; gradients of the adapters only (the rest is frozen)")
    for name, p in model.named_parameters():
        c.tensors["param." + name] = p.detach().clone()
        if p.requires_grad:
            c.leaves["param." + name] = p
    T = max(lengths) + 1
    idx = torch.randint(0, V, (len(lengths), T), generator=gen)
    tgt = torch.randint(0, V, (len(lengths), T), generator=gen)
    c.input("idx", idx)
    c.input("targets", tgt)
    logits, loss = model(idx, tgt)
    c.finish(gen, {"logits": logits, "loss": loss}, ["loss"])
    adapters = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(adapters, lr=lr, betas=betas, eps=eps, weight_decay=wd)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        step_loss = model(idx, tgt)[1]
        losses.append(step_loss.detach().clone())
        step_loss.backward()
        opt.step()
    c.tensors["adamw_losses"] = torch.stack(losses)
    for name, p in model.named_parameters():
        if p.requires_grad:
            c.tensors["after_adamw." + name] = p.detach().clone()
    return {"gpt_lora": c}


# The shapes of each variant: `alt` changes every one of them, so that a test which only works on the committed
# files' shapes fails on the other set.
VARIANTS = {
    "default": dict(
        softmax=(2, 3, 5), softmax_dim=-1, ce_logits=(10, 9), ce_target=(10,),
        bma={"a": (2, 1, 8), "b": (3, 1), "c": (8,)}, mm_a=(2, 1, 3, 5), mm_b=(2, 5, 4), mt_a=(2, 3, 6), mt_b=(2, 5, 6),
        linear=(5, 4, True), linear_x=(2, 3), layer_norm=(2, 3, 8), embedding=(7, 8), embedding_ids=(2, 5),
        sdpa_causal=(2, 2, 5, 4), sdpa_padding=(2, 3, 5, 4, 6), self_attention=(2, 5, 8, 6, 5),
        causal_self_attention=(2, 5, 8), mha_self=(2, 5, 8, 2), mha_cross=(2, 3, 5, 8, 4), bahdanau=(2, 5, 8, 7, 5, 4),
        layers=(2, 4, 5, 8, 2, 16), optim=(7, 5), clip=((3, 4), (5,), (2, 2, 2)),
        seq2seq=dict(vocab=10, batch=4, len=6, d_model=16, n_heads=2, layers=2, d_ff=32, max_len=8),
        gpt=dict(vocab=11, block_size=8, n_layer=2, n_head=2, n_embd=16, lengths=(6, 4, 2)), lora=(4, 8.0)),
    "alt": dict(
        softmax=(3, 4, 7), softmax_dim=1, ce_logits=(4, 6, 3), ce_target=(4, 3),
        bma={"a": (3, 1, 5), "b": (4, 1), "c": (5,)}, mm_a=(3, 1, 2, 4), mm_b=(2, 4, 6), mt_a=(3, 4, 5), mt_b=(3, 2, 5),
        linear=(6, 3, False), linear_x=(4,), layer_norm=(3, 12), embedding=(11, 6), embedding_ids=(3, 4),
        sdpa_causal=(1, 3, 6, 5), sdpa_padding=(3, 2, 6, 3, 4), self_attention=(3, 4, 6, 4, 7),
        causal_self_attention=(3, 6, 4), mha_self=(1, 6, 12, 3), mha_cross=(3, 2, 6, 6, 2), bahdanau=(3, 6, 5, 4, 3, 6),
        layers=(3, 3, 6, 12, 3, 20), optim=(4, 6), clip=((2, 3), (7,)),
        seq2seq=dict(vocab=7, batch=3, len=5, d_model=12, n_heads=3, layers=1, d_ff=20, max_len=6),
        gpt=dict(vocab=9, block_size=6, n_layer=1, n_head=3, n_embd=12, lengths=(3, 5)), lora=(2, 3.0)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="default")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # one summation order for matmul
    gen = torch.Generator().manual_seed(args.seed)
    S = VARIANTS[args.variant]
    made = {}
    # every case draws from one generator in this order, so a case added at the end leaves the files before it
    # unchanged
    for group in (elementwise_cases, layer_cases, attention_cases, transformer_cases, optimizer_cases, gpt_cases,
                  lora_cases):
        made.update(group(gen, S))
    for stem, case in sorted(made.items()):
        meta = dict(case.config, kind=case.kind, generator="tools/make_golden.py", seed=args.seed,
                    variant=args.variant, torch_version=torch.__version__)
        write_safetensors(os.path.join(args.out, stem + ".safetensors"), case.tensors, meta)
    total = sum(os.path.getsize(os.path.join(args.out, s + ".safetensors")) for s in made)
    print(f"wrote {len(made)} cases ({total} bytes) to {args.out} (variant {args.variant}, seed {args.seed}, "
          f"torch {torch.__version__})")


if __name__ == "__main__":
    sys.exit(main())
