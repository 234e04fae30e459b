#!/usr/bin/env python3
"""cuvil-export --strategy hybrid end to end, against PyTorch.

The models: an MLP over run-time rows, a token sequence with its mask
sharing the symbol seq, a transformer encoder over a run-time sequence, a
hand-written BERT-style attention block with a padding mask (its views
sized by x.size(1)), a GPT-style decoder whose causal mask is a buffer cut
to the run-time length (scripted, and traced on one length), a GPT over
token ids that creates its positions and causal masks at run time
(torch.arange(t), torch.full((t, t)), torch.ones(t, t): scripted, traced,
specialized), a ViT-style class token expanded to a run-time batch, a CNN
over a run-time batch.

Models are built by PyTorch at test time and scripted; each hybrid library
is compiled once with bounded run-time dimensions and run at several sizes
through cuvil-run, its outputs compared with PyTorch's (rtol 1e-3, atol
1e-4, as for static libraries). Then the bad inputs: a size outside its
bounds, two inputs sharing a symbol with different sizes, a wrong rank, a
static model's dimension given as '?' without --strategy hybrid, and bounds
whose arena would not fit: each a clear error and a non-zero exit.

Exit 0: every case passed; 1: a failure (named); 77: PyTorch is missing.
"""
import argparse
import math
import os
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

from harness import check, compare, expect_error, export, failures, run, run_library  # noqa: E402

SIZES = [1, 7, 64, 128, 384, 512]


class Mlp(nn.Module):
    """Rows of features: linear layers with run-time rows, layer norm, softmax."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(24, 64)
        self.b = nn.Linear(64, 10)
        self.ln = nn.LayerNorm(64)

    def forward(self, x):
        h = self.ln(torch.relu(self.a(x)))
        return torch.softmax(self.b(h), -1)


class MaskedTokens(nn.Module):
    """A token sequence and its mask, sharing the symbol seq: linear with a
    residual, layer norm, the mask broadcast over features, a mean over
    the sequence (a reduction over the run-time dimension)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 32)
        self.ln = nn.LayerNorm(32)
        self.head = nn.Linear(32, 4)

    def forward(self, x, mask):
        h = self.ln(torch.nn.functional.gelu(self.proj(x)) + x)
        h = h * mask.unsqueeze(-1)
        pooled = h.sum(1) / mask.sum(1, keepdim=True)
        return self.head(pooled), h.transpose(1, 2)


class Encoder(nn.Module):
    """BERT-style: nn.TransformerEncoder (PyTorch's fused encoder layer),
    the run-time sequence through attention's reshapes and products."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(64, 8)

    def forward(self, x):
        return self.head(self.encoder(x))


class MaskedAttention(nn.Module):
    """A BERT-style block written by hand: q/k/v views with the run-time
    sequence length read from the input (x.size(1)), an additive attention
    mask from the padding mask, softmax, a residual and layer norm."""

    def __init__(self, e=64, h=4):
        super().__init__()
        self.h, self.d = h, e // h
        self.qkv = nn.Linear(e, 3 * e)
        self.o = nn.Linear(e, e)
        self.ln = nn.LayerNorm(e)

    def forward(self, x, mask):
        b, s, e = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, s, self.h, self.d).transpose(1, 2)
        k = k.view(b, s, self.h, self.d).transpose(1, 2)
        v = v.view(b, s, self.h, self.d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        att = att + (1.0 - mask[:, None, None, :]) * -10000.0
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, s, e)
        return self.ln(x + self.o(y))


class CausalDecoder(nn.Module):
    """A GPT-style block (nanoGPT's): a causal mask kept as a buffer and cut
    to the run-time length, bias[:, :, :T, :T] with T = x.size(1)."""

    def __init__(self, e=64, h=4, max_len=512):
        super().__init__()
        self.h, self.d = h, e // h
        self.qkv = nn.Linear(e, 3 * e)
        self.o = nn.Linear(e, e)
        self.ln = nn.LayerNorm(e)
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len))

    def forward(self, x):
        b, t, e = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.h, self.d).transpose(1, 2)
        k = k.view(b, t, self.h, self.d).transpose(1, 2)
        v = v.view(b, t, self.h, self.d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return x + self.o(y.transpose(1, 2).reshape(b, t, e))


class GptBlock(nn.Module):
    """Causal self-attention with an additive mask (Hugging Face's) or a
    keep mask filled with -inf (nanoGPT's)."""

    def __init__(self, e, h, additive: bool):
        super().__init__()
        self.h, self.d, self.additive = h, e // h, additive
        self.qkv = nn.Linear(e, 3 * e)
        self.o = nn.Linear(e, e)
        self.ln = nn.LayerNorm(e)

    def forward(self, x, additive, keep):
        b, t = x.size(0), x.size(1)
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.h, self.d).transpose(1, 2)
        k = k.view(b, t, self.h, self.d).transpose(1, 2)
        v = v.view(b, t, self.h, self.d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d))
        if self.additive:
            att = att + additive
        else:
            att = att.masked_fill(keep == 0, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return x + self.o(y.transpose(1, 2).reshape(b, t, -1))


class TokenGpt(nn.Module):
    """A GPT over token ids of a run-time length whose tensors of that length
    are created at run time: positions torch.arange(t) into a position
    embedding, the causal mask torch.triu(torch.full((t, t), -inf), 1)
    (Hugging Face's way) in one block and torch.tril(torch.ones(t, t)) in the
    other (nanoGPT's), a language-model head."""

    def __init__(self, vocab=100, e=64, h=4, max_len=512):
        super().__init__()
        self.wte = nn.Embedding(vocab, e)
        self.wpe = nn.Embedding(max_len, e)
        self.blocks = nn.ModuleList([GptBlock(e, h, True), GptBlock(e, h, False)])
        self.ln = nn.LayerNorm(e)
        self.head = nn.Linear(e, vocab, bias=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(0, t, dtype=torch.long))
        additive = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        keep = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        for block in self.blocks:
            x = block(x, additive, keep)
        return self.head(self.ln(x))


class ClassToken(nn.Module):
    """A ViT-style head over a run-time batch of a run-time number of patches:
    the class token expanded to the batch (cls.expand(b, -1, -1)), position
    embeddings cut to the length, zeros of the run-time size concatenated."""

    def __init__(self, e=32, max_len=65):
        super().__init__()
        self.proj = nn.Linear(16, e)
        self.cls = nn.Parameter(torch.randn(1, 1, e))
        self.pos = nn.Parameter(torch.randn(1, max_len, e) * 0.1)
        self.ln = nn.LayerNorm(e + 4)

    def forward(self, patches):
        b = patches.size(0)
        x = torch.cat([self.cls.expand(b, -1, -1), self.proj(patches)], dim=1)
        x = x + self.pos[:, : x.size(1)]
        x = torch.cat([x, torch.zeros(b, x.size(1), 4)], dim=-1)
        return self.ln(x).mean(1)


class Cnn(nn.Module):
    """A run-time batch through convolutions (direct, depthwise, 1x1, with a
    folded batch norm), max and adaptive average pooling, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                               nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.ReLU(),
                               nn.Conv2d(32, 32, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.f(x), 1))


def build(bin_dir, work, name, module, shapes, what):
    """Saves `module` as NAME.pt and exports NAME.so with --strategy hybrid:
    (the model's path, the library's or None when the export failed)."""
    path = os.path.join(work, f"{name}.pt")
    module.save(path)
    lib = os.path.join(work, f"{name}.so")
    r = export(bin_dir, path, shapes, lib)
    check(r.returncode == 0, f"{what}: exported with {' '.join(shapes)}" +
          ("" if r.returncode == 0 else ": " + r.stderr))
    return path, (lib if r.returncode == 0 else None)


def sequence_and_mask(rng, batch, n, features):
    """Random tokens and a padding mask that keeps at least the first."""
    x = rng.standard_normal((batch, n, features)).astype(np.float32)
    mask = (rng.random((batch, n)) > 0.3).astype(np.float32)
    mask[:, 0] = 1.0
    return [x, mask]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    work = args.work or tempfile.mkdtemp(prefix="cuvil-hybrid-")
    os.makedirs(work, exist_ok=True)

    # Run-time rows.
    mlp = torch.jit.script(Mlp().eval())
    mlp_path, lib = build(args.bin, work, "mlp", mlp, ["0=rows:1..512x24xf32"], "mlp")
    if lib:
        for n in SIZES:
            compare(args.bin, lib, mlp, [rng.standard_normal((n, 24)).astype(np.float32)], work,
                    f"mlp rows={n}")
        r, _ = run_library(args.bin, lib, [np.zeros((513, 24), np.float32)], work)
        expect_error(r, ["'x' dim 0", "rows", "513", "1..512"], "mlp: a size above its bounds")
        r, _ = run_library(args.bin, lib, [np.zeros((4, 24, 1), np.float32)], work)
        expect_error(r, ["input 0 (x)", "?x24xf32"], "mlp: a rank other than the declared one")
        r, _ = run_library(args.bin, lib, [np.zeros((4, 25), np.float32)], work)
        expect_error(r, ["24"], "mlp: a static dimension that differs")

    # Two inputs sharing the symbol seq (the second without bounds takes the
    # first's).
    tokens = torch.jit.script(MaskedTokens().eval())
    tok_path, lib = build(args.bin, work, "tokens", tokens, ["0=2xseq:1..512x32xf32", "1=2xseqxf32"],
                          "tokens")
    if lib:
        for n in SIZES:
            compare(args.bin, lib, tokens, sequence_and_mask(rng, 2, n, 32), work, f"tokens seq={n}")
        r, _ = run_library(args.bin, lib, [np.zeros((2, 6, 32), np.float32), np.ones((2, 5), np.float32)], work)
        expect_error(r, ["'mask' dim 1", "'x' dim 1", "seq"], "tokens: inputs sharing seq with different sizes")
        r, _ = run_library(args.bin, lib, [np.zeros((2, 0, 32), np.float32), np.ones((2, 0), np.float32)], work)
        expect_error(r, ["dim 1", "0", "1..512"], "tokens: a size below its bounds")

    # A transformer encoder over a run-time sequence length.
    enc = torch.jit.script(Encoder().eval())
    _, lib = build(args.bin, work, "encoder", enc, ["0=1xseq:1..512x64xf32"], "encoder")
    if lib:
        for n in SIZES:
            compare(args.bin, lib, enc, [rng.standard_normal((1, n, 64)).astype(np.float32)], work,
                    f"encoder seq={n}")

    # The same encoder with static copies for two lengths (--specialize):
    # those lengths take the static code, the others the generic one.
    enc_path = os.path.join(work, "encoder.pt")
    spec_lib = os.path.join(work, "encoder_spec.so")
    seq = ["0=1xseq:1..512x64xf32"]
    r = export(args.bin, enc_path, seq, spec_lib, extra=["--specialize", "seq=64,128"])
    check(r.returncode == 0, "encoder --specialize seq=64,128: exported" + ("" if r.returncode == 0 else ": " + r.stderr))
    if r.returncode == 0:
        for n in SIZES:
            compare(args.bin, spec_lib, enc, [rng.standard_normal((1, n, 64)).astype(np.float32)], work,
                    f"encoder --specialize seq={n}")
    bad = os.path.join(work, "spec_bad.so")
    r = export(args.bin, enc_path, seq, bad, extra=["--specialize", "len=64"])
    expect_error(r, ["no input has a run-time dimension named 'len'", "'seq'"], "--specialize of an unknown symbol")
    r = export(args.bin, enc_path, seq, bad, extra=["--specialize", "seq=1024"])
    expect_error(r, ["seq=1024 is outside the bounds 1..512"], "--specialize outside the bounds")
    r = export(args.bin, enc_path, ["0=1x64x64xf32"], bad, strategy="graph_fusion", extra=["--specialize", "seq=64"])
    expect_error(r, ["--specialize", "--strategy hybrid"], "--specialize without the hybrid strategy")
    check(not os.path.exists(os.path.join(work, "spec_bad.so")), "no library written for a refused --specialize")

    # Attention with a padding mask, sizes read from the input.
    att = torch.jit.script(MaskedAttention().eval())
    _, lib = build(args.bin, work, "attention", att, ["0=2xseq:1..512x64xf32", "1=2xseqxf32"], "attention")
    if lib:
        for n in SIZES:
            compare(args.bin, lib, att, sequence_and_mask(rng, 2, n, 64), work, f"attention seq={n}")

    # A GPT-style decoder, scripted and traced on one length (torch.jit.trace
    # records x.size(1), so the traced model takes every length too).
    dec = CausalDecoder().eval()
    for form, module in (("scripted", torch.jit.script(dec)),
                         ("traced", torch.jit.trace(dec, torch.randn(1, 7, 64)))):
        _, lib = build(args.bin, work, f"decoder_{form}", module, ["0=1xseq:1..512x64xf32"],
                       f"decoder ({form})")
        if lib:
            for n in SIZES:
                compare(args.bin, lib, dec, [rng.standard_normal((1, n, 64)).astype(np.float32)], work,
                        f"decoder ({form}) seq={n}")

    # A GPT over token ids, creating its positions and causal masks at run
    # time (scripted, and traced on one length: trace records x.size(1), so
    # the sizes stay run-time ones); with --specialize the static copies
    # fold them to constants.
    gpt = TokenGpt().eval()
    ids = lambda n: [rng.integers(0, 100, (1, n)).astype(np.int64)]  # noqa: E731
    for form, module in (("scripted", torch.jit.script(gpt)),
                         ("traced", torch.jit.trace(gpt, torch.randint(0, 100, (1, 9))))):
        gpt_path, lib = build(args.bin, work, f"gpt_{form}", module, ["0=1xseq:1..512xi64"], f"token gpt ({form})")
        if lib:
            for n in SIZES:
                compare(args.bin, lib, gpt, ids(n), work, f"token gpt ({form}) seq={n}")
    r = export(args.bin, gpt_path, ["0=1xseq:1..512xi64"], os.path.join(work, "gpt_spec.so"),
               extra=["--specialize", "seq=64"])
    check(r.returncode == 0, f"token gpt --specialize seq=64: {r.stderr.strip()[-300:]}")
    if r.returncode == 0:
        for n in [7, 64, 128]:
            compare(args.bin, os.path.join(work, "gpt_spec.so"), gpt, ids(n), work,
                    f"token gpt --specialize seq={n}")

    # A class token expanded to a run-time batch of run-time length.
    vit = ClassToken().eval()
    _, lib = build(args.bin, work, "cls", torch.jit.script(vit), ["0=batch:1..8xn:1..64x16xf32"], "class token")
    if lib:
        for b, n in [(1, 1), (3, 7), (8, 64)]:
            compare(args.bin, lib, vit, [rng.standard_normal((b, n, 16)).astype(np.float32)], work,
                    f"class token batch={b} n={n}")

    # Run-time sizes that may be negative: PyTorch raises, the library
    # fails its run with the message (and computes at the sizes where
    # they are not).
    class Shrink(nn.Module):
        def forward(self, x):
            n = x.size(1)
            return torch.arange(n - 2).float() + x.sum(), torch.zeros(n - 3, 2) + 1.0

    shrink = torch.jit.script(Shrink())
    _, lib = build(args.bin, work, "shrink", shrink, ["0=1xseq:1..64xf32"], "negative run-time sizes")
    if lib:
        compare(args.bin, lib, shrink, [rng.standard_normal((1, 9)).astype(np.float32)], work, "shrink seq=9")
        r, _ = run_library(args.bin, lib, [rng.standard_normal((1, 1)).astype(np.float32)], work)
        expect_error(r, ["torch.arange: upper bound and larger bound inconsistent"], "arange of a negative count")
        r, _ = run_library(args.bin, lib, [rng.standard_normal((1, 2)).astype(np.float32)], work)
        expect_error(r, ["negative dimension in a tensor factory"], "zeros of a negative size")

    # A CNN over a run-time batch.
    cnn = Cnn().eval()
    with torch.no_grad():  # batch-norm statistics that are not the identity
        cnn.f[1].running_mean.uniform_(-0.5, 0.5)
        cnn.f[1].running_var.uniform_(0.5, 2.0)
    cnn = torch.jit.script(cnn)
    _, lib = build(args.bin, work, "cnn", cnn, ["0=batch:1..64x3x32x32xf32"], "cnn")
    if lib:
        for n in [1, 3, 8, 64]:
            compare(args.bin, lib, cnn, [rng.standard_normal((n, 3, 32, 32)).astype(np.float32)], work,
                    f"cnn batch={n}")

    # Compile-time mistakes: two different symbols meeting where the code
    # assumes one size (a broadcast of 1 along them is not supported).
    class Add(nn.Module):
        def forward(self, x, y):
            return torch.relu(x) + y

    add = torch.jit.script(Add())
    add_path, lib = build(args.bin, work, "add", add, ["0=n:1..64x16xf32", "1=nx16xf32"],
                          "add with one symbol for both inputs")
    if lib:
        for n in [1, 5, 64]:
            compare(args.bin, lib, add, [rng.standard_normal((n, 16)).astype(np.float32),
                                         rng.standard_normal((n, 16)).astype(np.float32)], work, f"add n={n}")

    r = export(args.bin, add_path, ["0=?x16xf32", "1=?x16xf32"], os.path.join(work, "add2.so"))
    expect_error(r, ["cuvil.math.add", "'x.0' and 'y.0'", "one symbol"],
                 "two anonymous run-time sizes meeting in an add")
    r = export(args.bin, mlp_path, ["0=?x24xf32"], os.path.join(work, "static.so"), strategy="graph_fusion")
    expect_error(r, ["--strategy hybrid"], "a dynamic dimension without --strategy hybrid")
    r = export(args.bin, mlp_path, ["0=rows:9..3x24xf32"], os.path.join(work, "empty.so"))
    expect_error(r, ["bounds", "empty"], "empty bounds")
    r = export(args.bin, tok_path, ["0=2xseq:1..512x32xf32", "1=2xseq:1..64xf32"], os.path.join(work, "two.so"))
    expect_error(r, ["seq", "one set of bounds"], "a shared symbol given two sets of bounds")
    if os.path.exists(os.path.join(work, "huge.so")):
        os.remove(os.path.join(work, "huge.so"))
    r = export(args.bin, mlp_path, ["0=rows:1..1099511627775x24xf32"], os.path.join(work, "huge.so"))
    expect_error(r, ["arena", "bounds"], "bounds whose arena would not fit")
    check(not os.path.exists(os.path.join(work, "huge.so")), "no library written for a failed export")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
