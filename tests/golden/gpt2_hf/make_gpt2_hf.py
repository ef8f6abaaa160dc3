#!/usr/bin/env python3
"""GPT-2 in Hugging Face's layout, with random weights, and PyTorch's numbers for it (llm.c's test_gpt2 way).

No real GPT-2 weights can be downloaded where the tests run, so PyTorch builds GPT-2 itself (HF's GPT2LMHeadModel:
Conv1D layers, gelu_new, LayerNorm eps 1e-5, lm_head tied to wte, the causal-mask buffers attn.bias and
attn.masked_bias), fills it with random weights, and writes

  model.safetensors     the model exactly as GPT2LMHeadModel.save_pretrained laid files out before the buffers
                        stopped being saved: names `transformer.h.0.attn.c_attn.weight`, ..., Conv1D weights stored
                        [in, out], the mask buffers present, lm_head.weight absent (tied), every tensor F32;
  expected.safetensors  a batch (idx, targets), its logits and loss computed in float64 and in float32 from the F32
                        weights, and the losses of 10 AdamW steps on that batch (float64 and float32), with the
                        AdamW settings of cppgrad-gpt's trainer in the metadata.

cppgrad's parity test (tests/parity/test_gpt2_hf_parity.cpp) imports model.safetensors and must reproduce them.

With --dtype f16 or bf16 it writes instead a smaller GPT-2 (32 wide) stored half precision, as many shared GPT-2s are:

  model_f16.safetensors       every tensor F16 (model_bf16: BF16), a few weights planted at float16's and
                              bfloat16's subnormals and smallest normals;
  model_f16_twin.safetensors  the same values as F32: PyTorch's `.float()` of each half tensor;
  expected_f16.safetensors    a batch (idx, targets) and its loss computed from the `.float()`ed weights, in float64
                              (loss) and float32 (loss_f32).

cppgrad imports the half file into float32 exactly as `.float()` does, so it must give the twin's model bit for bit
and PyTorch's loss (tests/parity/test_gpt2_hf_half.cpp).

    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --out tests/golden/gpt2_hf      # the committed files
    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --gpt2-124m --out /tmp/gpt2-124m  # 124M's shapes, ~0.5 GB
    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --check FILE --out DIR  # PyTorch reads FILE (an export)
    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --loss FILE --ids IDS --context T --n-head H --out DIR
                                       # FILE's loss on IDS (`cppgrad-gpt tokenize encode`) in eval's windows
    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --dtype f16 --out tests/golden/gpt2_hf   # committed too
    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --dtype bf16 --out tests/golden/gpt2_hf  # committed too

and other shapes and seed, to check that the tests follow the files rather than the committed shapes:

    /usr/bin/python3 tests/golden/gpt2_hf/make_gpt2_hf.py --variant alt --out /tmp/golden-alt/gpt2_hf
    CPPGRAD_GOLDEN_DIR=/tmp/golden-alt ctest --test-dir build -R parity.Gpt2Hf

The same seed and torch build write the same bytes (one thread, fixed generator).
"""

import argparse
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

torch.set_num_threads(1)

# --------------------------------------------------------------------------------------------- the model (HF's)


class Conv1D(torch.nn.Module):
    """HF's Conv1D: a linear layer whose weight is stored [in, out] (y = x W + b), OpenAI's TensorFlow layout."""

    def __init__(self, n_out, n_in):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n_in, n_out))
        self.bias = torch.nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):
    """GPT-2's GELU, the tanh approximation (HF's "gelu_new")."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(torch.nn.Module):
    def __init__(self, C, n_head, n_ctx):
        super().__init__()
        self.n_head = n_head
        self.c_attn, self.c_proj = Conv1D(3 * C, C), Conv1D(C, C)
        # the buffers HF's state dict carried: the causal mask [1, 1, n_ctx, n_ctx] and the value masked scores got
        self.register_buffer("bias", torch.tril(torch.ones(n_ctx, n_ctx)).view(1, 1, n_ctx, n_ctx))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # [B, nh, T, hs]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(v.size(-1))  # [B, nh, T, T]
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v  # [B, nh, T, hs]
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(torch.nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(4 * C, C), Conv1D(C, 4 * C)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class Block(torch.nn.Module):
    def __init__(self, C, n_head, n_ctx):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(C, eps=1e-5), torch.nn.LayerNorm(C, eps=1e-5)
        self.attn, self.mlp = Attention(C, n_head, n_ctx), MLP(C)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(torch.nn.Module):
    def __init__(self, V, n_ctx, L, n_head, C):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(V, C), torch.nn.Embedding(n_ctx, C)
        self.h = torch.nn.ModuleList(Block(C, n_head, n_ctx) for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(C, eps=1e-5)


class GPT2LMHeadModel(torch.nn.Module):
    def __init__(self, V, n_ctx, L, n_head, C):
        super().__init__()
        self.transformer = Transformer(V, n_ctx, L, n_head, C)

    def forward(self, idx, targets):
        t = self.transformer
        x = t.wte(idx) + t.wpe(torch.arange(idx.size(1)))  # [B, T, C]
        for block in t.h:
            x = block(x)
        logits = t.ln_f(x) @ t.wte.weight.T  # lm_head tied to wte: [B, T, V]
        return logits, F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def randomize(model, gen, std):
    """Every weight and bias random and far from zero (a zero bias or a unit LayerNorm would hide a mapping mistake):
    matrices and embeddings N(0, std), biases N(0, std / 2), LayerNorm weights 1 + U(-0.3, 0.3), their biases
    U(-0.3, 0.3)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name or "ln_f" in name:
                u = (torch.rand(p.shape, generator=gen) * 2 - 1) * 0.3
                p.copy_(1 + u if name.endswith("weight") else u)
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (std if p.dim() == 2 else std / 2))


# --------------------------------------------------------------------------------------------- safetensors


def write_safetensors(path, tensors, metadata):
    """8-byte little-endian header length, the JSON header (dtype, shape, data_offsets, __metadata__), then the raw
    little-endian bytes, in the given order, the data section 8-byte aligned."""
    codes = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.float16: "F16",
             torch.bfloat16: "BF16"}
    header, offset = {}, 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        header[name] = {"dtype": codes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for t in tensors.values():
            t = t.detach().contiguous()
            # numpy has no bfloat16: half types go out as their 16-bit patterns
            f.write((t.view(torch.int16) if t.element_size() == 2 else t).numpy().tobytes())
    os.replace(path + ".tmp", path)


def read_safetensors(path):
    """The reverse of write_safetensors for F32/F64/I64 files (trusted: files this machine wrote)."""
    dtypes = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name != "__metadata__":
            begin, end = e["data_offsets"]
            out[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=dtypes[e["dtype"]]).reshape(e["shape"])
    return out


def hf_state(model):
    """The model's state dict as HF's file holds it: transformer.-prefixed, buffers included, no lm_head (tied)."""
    return {name: t.detach().float().contiguous() for name, t in model.state_dict().items()}


# --------------------------------------------------------------------------------------------- the numbers


def adamw_losses(model, idx, targets, steps, hp):
    """The loss before each of `steps` AdamW steps on the same batch (llm.c's test_gpt2 loop)."""
    opt = torch.optim.AdamW(model.parameters(), lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"],
                            weight_decay=hp["weight_decay"])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(idx, targets)[1]
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return torch.tensor(losses, dtype=torch.float64)


def copy_in(dtype, cfg, state):
    m = GPT2LMHeadModel(*cfg).to(dtype)
    m.load_state_dict(state)
    return m


def random_model(args):
    """The config, GPT-2 of it with random weights, and the generator that drew them (the batch is drawn next)."""
    cfg = (args.vocab, args.n_ctx, args.n_layer, args.n_head, args.n_embd)
    gen = torch.Generator().manual_seed(args.seed)
    model = GPT2LMHeadModel(*cfg)
    randomize(model, gen, args.std)
    return cfg, model, gen


def random_batch(args, gen):
    seq = torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=gen)
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()  # each position predicts the next token


def make(args):
    cfg, model, gen = random_model(args)
    V, n_ctx, L, nh, C = cfg
    state = hf_state(model)  # F32, as the hub ships GPT-2
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "model.safetensors"), state, {"format": "pt"})

    idx, targets = random_batch(args, gen)
    # cppgrad-gpt's trainer's AdamW (models/gpt/trainer.cpp): betas 0.9 / 0.99, eps 1e-8, decay on every parameter
    hp = dict(lr=args.lr, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.01)
    out = {"idx": idx, "targets": targets}
    for dtype, suffix in ((torch.float64, ""), (torch.float32, "_f32")):
        with torch.no_grad():
            logits, loss = copy_in(dtype, cfg, state)(idx, targets)
        out["logits" + suffix], out["loss" + suffix] = logits, loss
        if args.steps > 0:
            out["adamw_losses" + suffix] = adamw_losses(copy_in(dtype, cfg, state), idx, targets, args.steps, hp)
    meta = dict(vocab_size=V, n_ctx=n_ctx, n_layer=L, n_head=nh, n_embd=C, seed=args.seed, std=args.std,
                adamw_steps=args.steps, torch_version=torch.__version__, generator="make_gpt2_hf.py",
                **{"adamw_" + k: repr(v) for k, v in hp.items()})
    write_safetensors(os.path.join(args.out, "expected.safetensors"), out, meta)
    if args.steps > 0:
        print("adamw losses float64:", [f"{x:.6f}" for x in out["adamw_losses"].tolist()])
    print(f"logits float32 vs float64: max |diff| {(out['logits_f32'].double() - out['logits']).abs().max():.2e}, "
          f"max |logit| {out['logits'].abs().max():.2f}")


def plant_tiny(model):
    """Weights at the edges of the half formats, too small to move the loss: float16's smallest subnormal, a negative
    one, its largest subnormal and smallest normal (2^-24, -3 2^-24, 1023 2^-24, 2^-14), and bfloat16's (float32's)
    smallest subnormal, a negative subnormal, its smallest normal and a subnormal that is no power of two."""
    with torch.no_grad():
        row = model.transformer.wte.weight[0]
        row[:8] = torch.tensor([2.0**-24, -3 * 2.0**-24, 1023 * 2.0**-24, 2.0**-14,
                                2.0**-133, -(2.0**-127), 2.0**-126, 3 * 2.0**-130])


def make_half(args):
    """The half-precision file, its float32 twin and PyTorch's loss from the `.float()`ed weights."""
    cfg, model, gen = random_model(args)
    V, n_ctx, L, nh, C = cfg
    plant_tiny(model)
    half_dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    half = {name: t.detach().to(half_dtype).contiguous() for name, t in model.state_dict().items()}
    widened = {name: t.float() for name, t in half.items()}  # what cppgrad's import must hold
    os.makedirs(args.out, exist_ok=True)
    suffix = "_" + args.dtype
    write_safetensors(os.path.join(args.out, f"model{suffix}.safetensors"), half, {"format": "pt"})
    write_safetensors(os.path.join(args.out, f"model{suffix}_twin.safetensors"), widened, {"format": "pt"})
    idx, targets = random_batch(args, gen)
    out = {"idx": idx, "targets": targets}
    for dtype, name in ((torch.float64, "loss"), (torch.float32, "loss_f32")):
        with torch.no_grad():
            out[name] = copy_in(dtype, cfg, widened)(idx, targets)[1].reshape(())
    meta = dict(vocab_size=V, n_ctx=n_ctx, n_layer=L, n_head=nh, n_embd=C, seed=args.seed, std=args.std,
                dtype=args.dtype, torch_version=torch.__version__, generator="make_gpt2_hf.py")
    write_safetensors(os.path.join(args.out, f"expected{suffix}.safetensors"), out, meta)
    print(f"{args.dtype}: loss float64 {out['loss'].item():.12f}, float32 {out['loss_f32'].item():.9f}")


def read_model(path, n_head, dtype):
    """An HF-layout file (cppgrad's export: no mask buffers) as the PyTorch model, its weights in dtype."""
    state = read_safetensors(path)
    V, C = state["transformer.wte.weight"].shape
    n_ctx = state["transformer.wpe.weight"].shape[0]
    L = len({k.split(".")[2] for k in state if k.startswith("transformer.h.")})
    model = GPT2LMHeadModel(V, n_ctx, L, n_head, C).to(dtype)
    missing, unexpected = model.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=False)
    assert not unexpected and all(k.endswith(".attn.bias") or k.endswith(".attn.masked_bias") for k in missing), \
        (missing, unexpected)
    return model


def check(args):
    """PyTorch reads an HF-layout file (cppgrad's export) and must reproduce expected.safetensors' float64 logits."""
    exp = read_safetensors(os.path.join(args.out, "expected.safetensors"))
    model = read_model(args.check, args.n_head, torch.float64)
    with torch.no_grad():
        logits, _ = model(exp["idx"], exp["targets"])
    print(f"{args.check}: PyTorch's float64 logits vs expected: max |diff| {(logits - exp['logits']).abs().max():.2e}")


def loss(args):
    """PyTorch reads an HF-layout file (cppgrad's export) and prints its mean loss over the ids in --ids, scored as
    `cppgrad-gpt eval --data` scores a text: the non-overlapping windows 0, T, 2T, ... while s + T + 1 <= n, each
    predicting ids[s + 1 : s + T + 1] from ids[s : s + T]; every window is whole, so the mean is over all targets."""
    with open(args.ids) as f:
        ids = torch.tensor([int(t) for t in f.read().split()], dtype=torch.int64)
    T = args.context
    starts = range(0, ids.numel() - T, T)  # s + T + 1 <= n
    idx = torch.stack([ids[s:s + T] for s in starts])  # [windows, T]
    targets = torch.stack([ids[s + 1:s + T + 1] for s in starts])
    for dtype in (torch.float64, torch.float32):
        model = read_model(args.loss, args.n_head, dtype)
        with torch.no_grad():
            value = model(idx, targets)[1].item()
        print(f"{args.loss}: PyTorch's {str(dtype)[6:]} loss over {targets.numel()} tokens: {value:.9f} nats/token")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--gpt2-124m", action="store_true", help="GPT-2 124M's shapes (not committed: ~0.5 GB)")
    p.add_argument("--variant", choices=("default", "alt"), default="default", help="alt: other small shapes")
    p.add_argument("--check", metavar="FILE", help="read FILE into PyTorch and compare with --out's expected logits")
    p.add_argument("--loss", metavar="FILE", help="read FILE into PyTorch and print its loss on --ids")
    p.add_argument("--ids", metavar="IDS", help="--loss: token ids, decimal, separated by white space")
    p.add_argument("--context", type=int, default=None, help="--loss: the window (the checkpoint's context)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--n-head", type=int, default=None)
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32",
                   help="f16 / bf16: the half-precision files (a smaller model) instead of the F32 ones")
    a = p.parse_args()
    small = dict(vocab=97, n_ctx=32, n_layer=2, n_head=2, n_embd=64, batch=2, seq=32, std=0.15, steps=10, lr=1e-3,
                 seed=0)
    alt = dict(vocab=61, n_ctx=24, n_layer=3, n_head=4, n_embd=48, batch=3, seq=20, std=0.15, steps=10, lr=1e-3, seed=7)
    big = dict(vocab=50257, n_ctx=1024, n_layer=12, n_head=12, n_embd=768, batch=2, seq=64, std=0.02, steps=0, lr=0,
               seed=0)
    half = dict(small, n_embd=32, steps=0, seed=1)  # committed twice over (F16 and BF16): kept small
    chosen = big if a.gpt2_124m else alt if a.variant == "alt" else half if a.dtype != "f32" else small
    for k, v in chosen.items():
        if getattr(a, k, None) is None:
            setattr(a, k, v)
    if a.loss:
        loss(a)
    elif a.check:
        check(a)
    elif a.dtype != "f32":
        make_half(a)
    else:
        make(a)


if __name__ == "__main__":
    main()
