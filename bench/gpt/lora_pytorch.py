"""One training step of a GPT-2-shaped model in PyTorch, full or LoRA, timed: the PyTorch side of
bench/gpt/lora_124m.sh.

The model is nanoGPT's (pre-LN blocks, fused qkv, tanh GELU, learned positions, lm_head tied to wte, GPT-2's init).
With a rank R > 0, each block's four matrices (c_attn, attn.c_proj, c_fc, mlp.c_proj) get a LoRA as PyTorch peft
builds one (y = x W^T + b + (alpha / r) x A^T B^T, A kaiming-uniform, B zero) and every other parameter is frozen;
AdamW steps the adapters alone. Random tokens; the median step after two warm-up steps, in ms.

usage: /usr/bin/python3 bench/gpt/lora_pytorch.py V L NH C T B STEPS THREADS RANK   (RANK 0: the full finetune)
"""
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

V, L, NH, C, T, B, STEPS, THREADS, RANK = map(int, sys.argv[1:10])
ALPHA = 8.0  # peft's default lora_alpha
torch.set_num_threads(THREADS)
torch.manual_seed(0)


class Linear(torch.nn.Linear):
    """nn.Linear, with an optional LoRA beside its frozen weight."""

    def add_lora(self, r):
        self.weight.requires_grad_(False)
        self.bias.requires_grad_(False)
        self.A = torch.nn.Parameter(torch.empty(r, self.in_features))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(self.out_features, r))
        self.scaling = ALPHA / r

    def forward(self, x):
        y = F.linear(x, self.weight, self.bias)
        if hasattr(self, "A"):
            y = y + F.linear(F.linear(x, self.A), self.B) * self.scaling
        return y


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
        self.c_attn, self.attn_proj = Linear(C, 3 * C), Linear(C, C)
        self.c_fc, self.mlp_proj = Linear(C, 4 * C), Linear(4 * C, C)

    def forward(self, x):
        Bx, Tx, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(Bx, Tx, NH, C // NH).transpose(1, 2) for t in (q, k, v))  # [B, NH, T, C / NH]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(C // NH)
        scores = scores.masked_fill(torch.ones(Tx, Tx, dtype=torch.bool).triu(1), float("-inf"))
        heads = F.softmax(scores, dim=-1) @ v
        x = x + self.attn_proj(heads.transpose(1, 2).reshape(Bx, Tx, C))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(V, C), torch.nn.Embedding(T, C)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(C)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.T  # [B, T, V]
        return F.cross_entropy(logits.view(-1, V), targets.view(-1))


model = GPT()
with torch.no_grad():
    for name, p in model.named_parameters():
        if p.dim() == 2:
            residual = name.endswith("attn_proj.weight") or name.endswith("mlp_proj.weight")
            p.normal_(0.0, 0.02 / math.sqrt(2 * L) if residual else 0.02)
        elif "ln" not in name:
            p.zero_()
if RANK > 0:
    model.requires_grad_(False)
    for block in model.blocks:
        for lin in (block.c_attn, block.attn_proj, block.c_fc, block.mlp_proj):
            lin.add_lora(RANK)
trained = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(trained, lr=1e-3, weight_decay=0.0)
times = []
for step in range(STEPS + 2):
    x = torch.randint(0, V, (B, T))
    y = (x * 7 + 3) % V
    t0 = time.perf_counter()
    loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - t0) * 1e3)
print(f"pytorch {torch.__version__} rank {RANK} threads {THREADS} B={B} T={T}: {sum(p.numel() for p in trained)} "
      f"trained of {sum(p.numel() for p in model.parameters())}; step median {statistics.median(times[2:]):.1f} ms")
