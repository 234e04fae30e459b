#!/usr/bin/env python3
"""The importer's test models: each is built with a fixed seed in eval mode,
saved with torch.jit.save, and paired with inputs and PyTorch's eager outputs.

    /usr/bin/python3 models.py --out DIR [--model NAME]...

writes DIR/NAME/{model.pt, input0.npy..., expected0.npy..., shapes.txt}
(shapes.txt holds the --input-shape flags for cuvil-import).
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return torch.log_softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = self.drop(torch.flatten(x, 1))
        return self.fc(x)


class ControlFlow(nn.Module):
    """A `for` loop that accumulates, an `if` on a shape (known at import
    time) and two `if`s on tensor data (kept as scf.if): the first takes its
    then-branch, the second its else-branch, for the test input."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        acc = torch.zeros_like(x)
        for i, layer in enumerate(self.layers):
            h = torch.tanh(layer(x))
            if i % 2 == 0:
                acc = acc + h
            else:
                acc = acc - 0.5 * h
        if x.size(0) > 1:
            acc = acc * 2.0
        if acc.sum() > -100.0:
            acc = acc * 3.0
            bias = torch.ones_like(acc)
        else:
            bias = torch.zeros_like(acc)
        if acc.abs().max() > 1000.0:
            acc = torch.relu(acc)
        else:
            acc = torch.sigmoid(acc) + bias
        return acc


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, a, b):
        s = self.proj(a) + b
        return s.sum(dim=1), torch.sigmoid(s) * b.max()


class Recurrent(nn.Module):
    """LSTM (2 layers, bidirectional, batch-first, given initial state), GRU
    (bidirectional, sequence-first), and RNNs with tanh and relu (no bias)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(16, 5, bidirectional=True)
        self.rnn_tanh = nn.RNN(10, 4, num_layers=2)
        self.rnn_relu = nn.RNN(4, 3, nonlinearity="relu", bias=False, batch_first=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        g, gh = self.gru(y.transpose(0, 1))
        r, rh = self.rnn_tanh(g)
        q, qh = self.rnn_relu(r.transpose(0, 1))
        return y, h, c, gh, rh, q, qh


class DenseStyle(nn.Module):
    """DenseNet's patterns: a growing list of tensors passed to submodules,
    in-place dropout; plus list and string slicing and dict()."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(4 + 3 * i, 3, 1) for i in range(3)])
        self.drop = nn.Dropout(0.2, inplace=True)
        self.names = ["a", "b", "c", "d"]

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(self.drop(layer(torch.cat(features, 1))))
        table = dict([("first", features[0]), ("last", features[-1])])
        picked = features[1:3]
        tag = "scale_x2"[6:]
        scale = 2.0 if tag == "x2" else 1.0
        names = self.names[::2]
        return torch.cat(picked, 1) * scale + table["last"].sum() * len(names)


class Resampling(nn.Module):
    """F.interpolate in every supported mode, by size and by scale factor;
    returns a dict (as torchvision's segmentation models do)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        f = self.conv(x)
        up = F.interpolate(f, size=x.shape[-2:], mode="bilinear", align_corners=False)
        near = F.interpolate(f, scale_factor=1.5, mode="nearest")
        exact = F.interpolate(f, size=(5, 7), mode="nearest-exact")
        corners = F.interpolate(f, scale_factor=2.0, mode="bilinear", align_corners=True)
        line = F.interpolate(f.flatten(2), size=13, mode="linear")
        return {"out": up, "nearest": near, "exact": exact, "corners": corners, "line": line}


class Conv3dVariants(nn.Module):
    """3-D convolutions (one 2-D convolution over the depth taps as
    channels): strides, padding, dilation in depth, groups, no bias, a
    depth-1 kernel with stride, a depthwise one, and a transposed one."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv3d(3, 8, 3, padding=1)
        self.b = nn.Conv3d(8, 6, (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), groups=2, bias=False)
        self.c = nn.Conv3d(6, 6, (2, 3, 3), padding=(0, 1, 1), dilation=(2, 1, 1), groups=3)
        self.d = nn.Conv3d(8, 5, (1, 3, 3), stride=2, padding=(0, 1, 1))
        self.e = nn.Conv3d(8, 8, 3, padding=1, groups=8)
        self.t = nn.ConvTranspose3d(6, 4, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        y = torch.relu(self.a(x))
        return self.c(self.b(y)), self.d(y), self.e(y), self.t(self.b(y))


class ConvPoolVariants(nn.Module):
    """Every convolution and pooling attribute the code generator handles:
    strides, padding, dilation, groups, transposed convolutions with output
    padding, ceil mode, padding excluded from averages, divisor override and
    adaptive pooling whose windows overlap."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)
        self.t1 = nn.ConvTranspose1d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.c2 = nn.Conv2d(4, 8, (3, 2), stride=(2, 1), padding=(1, 0), bias=False)
        self.t2 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1,
                                     groups=2, dilation=(1, 2))
        self.dw = nn.Conv2d(6, 6, 3, padding=1, groups=6)

    def forward(self, x, s):
        t = self.t1(self.c1(s))
        a = F.max_pool1d(t, 3, stride=2, padding=1, ceil_mode=True)  # 9 wide
        a = a[..., :8] + F.avg_pool1d(t, 2, stride=2)  # 8 wide
        y = self.dw(self.t2(self.c2(x)))
        m = F.max_pool2d(y, 3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True)
        v = F.avg_pool2d(y, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        d = F.avg_pool2d(y, 2, stride=1, padding=1, divisor_override=3)
        g = F.adaptive_avg_pool2d(y, (5, 3))
        h = F.adaptive_avg_pool1d(a, 4)
        # Windows gathered by table: indices, adaptive max, unfold/fold.
        mi, idx = F.max_pool2d(y, (2, 3), stride=(2, 1), padding=(1, 1), return_indices=True)
        am, ai = F.adaptive_max_pool2d(y, (3, 4), return_indices=True)
        cols = F.unfold(y, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
        back = F.fold(cols, y.shape[-2:], (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
        return m, v, d, g, h, mi, idx, am, ai, back


class Indexing(nn.Module):
    """Reads at computed positions: embedding, index_select and gather with
    index tensors given at run time, padding in every mode, argmax/argmin,
    group norm, and an assertion on the data."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.gn = nn.GroupNorm(2, 6)

    def forward(self, x, ids):
        assert bool((x > -100.0).all()), "inputs must be above -100"
        e = self.emb(ids)                                   # [2, 5, 6]
        picked = torch.index_select(e, 1, ids[0, :3] % 5)  # [2, 3, 6]
        g = torch.gather(x, 2, ids[:, :4].unsqueeze(1).expand(2, 6, 4) % 7)
        r = F.pad(x, (2, 3, 1, 1), mode="reflect")
        c = F.pad(x, (1, 7), mode="circular")
        p = F.pad(x, (2, 0, 1, 1), mode="replicate")
        k = F.pad(x, (-1, 2, 1, -2), value=0.5)
        n = self.gn(x.unsqueeze(-1)).squeeze(-1)
        return picked, g, r, c, p, k, n, x.argmax(2), x.argmin(), x.argmax(1, keepdim=True)


class CausalDecoder(nn.Module):
    """nn.TransformerDecoder with a causal mask made by torch.triu and a
    lower-triangular (tril) weighting of the memory; masked attention runs
    through F.multi_head_attention_forward, not the fused fast path."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(32, 4, 64, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, 2)

    def forward(self, tgt, memory):
        n = tgt.size(1)
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        weights = torch.tril(torch.ones(memory.size(1), memory.size(1)), -1)
        return self.dec(tgt, torch.matmul(weights, memory) + memory, tgt_mask=mask)


class HandwrittenNorms(nn.Module):
    """Softmax and layer norm written out in elementary ops (as some model
    code does): the graph pipeline turns them into single ops."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.gamma = nn.Parameter(torch.rand(16) + 0.5)
        self.beta = nn.Parameter(torch.randn(16))

    def forward(self, x):
        h = self.fc(x)
        mean = h.mean(-1, keepdim=True)
        d = h - mean
        var = (d * d).mean(-1, keepdim=True)
        h = d * torch.rsqrt(var + 1e-5) * self.gamma + self.beta
        e = torch.exp(h - h.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)


class UNet(nn.Module):
    """A small U-Net: two down and two up stages, skip connections by
    concatenation, transposed-convolution upsampling, a per-pixel head."""

    def __init__(self, c=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                                 nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.down1, self.down2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2, self.dec2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2), block(4 * c, 2 * c)
        self.up1, self.dec1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2), block(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        m = self.mid(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(m), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return self.head(u1)


class TransformerBlock(nn.Module):
    """A pre-norm transformer block written by hand, as users write them:
    fused QKV projection split with chunk, heads by view/transpose, scaled
    dot-product attention with a causal mask from triu, GELU MLP, residuals;
    learned positional embeddings indexed by arange."""

    def __init__(self, dim=32, heads=4, seq=12):
        super().__init__()
        self.heads = heads
        self.pos = nn.Embedding(seq, dim)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, c = x.shape
        x = x + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.norm2(x))


class RankingHeads(nn.Module):
    """Heads that rank, after a small CNN: a classifier's top-5 (scores and
    class ids), a detector's boxes in score order (argsort, then gather), a
    recommender's top-10 items by dot-product score, and the median and
    quartiles of those scores."""

    def __init__(self, classes=20, items=50, dim=16):
        super().__init__()
        self.classes = classes
        self.backbone = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls, self.box = nn.Linear(dim, classes), nn.Linear(dim, 4 * classes)
        self.items = nn.Embedding(items, dim)

    def forward(self, x):
        f = self.backbone(x)
        probs = self.cls(f).softmax(-1)
        top_p, top_i = probs.topk(5, dim=-1)
        boxes = self.box(f).view(-1, self.classes, 4)
        order = probs.argsort(dim=-1, descending=True)
        ranked = boxes.gather(1, order.unsqueeze(-1).expand(-1, -1, 4))
        scores = f @ self.items.weight.t()
        item_s, item_i = torch.topk(scores, 10)
        med = scores.median(dim=-1).values
        quart = torch.quantile(scores, torch.tensor([0.25, 0.75]), dim=1)
        return top_p, top_i, ranked, item_s, item_i, med, quart


class AudioFrontend(nn.Module):
    """An audio classifier as speech and sound models begin: a Hann-windowed
    STFT, the power spectrum, a mel-style filter bank, log compression
    relative to the clip's own peak (a Python float read from tensor data at
    run time), a small 1-D CNN. Also returned: the complex spectrum itself,
    the signal rebuilt from it by istft, and rfft band magnitudes."""

    def __init__(self, n_fft=64, hop=16, mels=12, classes=5):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", torch.rand(n_fft // 2 + 1, mels))
        self.conv = nn.Conv1d(mels, 8, 3, padding=1)
        self.fc = nn.Linear(8, classes)

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, hop_length=self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        mel = torch.matmul(power.transpose(1, 2), self.fb).transpose(1, 2)
        logmel = torch.log10(mel.clamp(min=1e-10))
        logmel = logmel - float(logmel.max())
        h = torch.relu(self.conv(logmel)).mean(-1)
        rebuilt = torch.istft(spec, self.n_fft, hop_length=self.hop, window=self.window,
                              length=wav.shape[-1])
        bands = torch.fft.rfft(wav, norm="ortho").abs()[:, :16]
        return self.fc(h), spec, rebuilt, bands


class Recommender(nn.Module):
    """A DLRM-style recommender: sparse features pooled by EmbeddingBag
    tables (sum with per-sample weights, mean, max; bags given by offsets),
    a bottom MLP on dense features, pairwise dot-product interactions, a top
    MLP and the top-3 items."""

    def __init__(self, dense=8, dim=16, rows=(40, 30, 20)):
        super().__init__()
        self.tables = nn.ModuleList([nn.EmbeddingBag(r, dim, mode=m) for r, m in zip(rows, ("sum", "mean", "max"))])
        self.bottom = nn.Sequential(nn.Linear(dense, 32), nn.ReLU(), nn.Linear(32, dim), nn.ReLU())
        n = len(rows) + 1
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, idx, offsets, weights):
        x = self.bottom(dense)
        feats = [x]
        for k, table in enumerate(self.tables):
            feats.append(table(idx[k], offsets, per_sample_weights=weights if k == 0 else None))
        z = torch.stack(feats, dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))
        pairs = torch.tril_indices(z.shape[1], z.shape[1], offset=-1)
        score = self.top(torch.cat([x, inter[:, pairs[0], pairs[1]]], dim=1)).squeeze(1)
        return score.sigmoid(), score.topk(3).indices


def bn_randomize(model):
    # Non-trivial running statistics, so BatchNorm is really exercised.
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return model


def build(name):
    """The eager module, its example inputs, and how the test model is made
    from it: "script", "trace" or "trace_freeze"."""
    torch.manual_seed(0)
    import torchvision
    if name == "mlp_traced":
        return MLP().eval(), [torch.randn(4, 16)], "trace"
    if name == "mlp_scripted":
        return MLP().eval(), [torch.randn(4, 16)], "script"
    if name == "cnn_scripted":
        return bn_randomize(SmallCNN()).eval(), [torch.randn(2, 3, 16, 16)], "script"
    if name == "resnet18_traced_frozen":
        m = bn_randomize(torchvision.models.resnet18()).eval()
        return m, [torch.randn(1, 3, 224, 224)], "trace_freeze"
    if name == "resnet18_scripted":
        m = bn_randomize(torchvision.models.resnet18()).eval()
        return m, [torch.randn(1, 3, 224, 224)], "script"
    if name == "mobilenet_v2_scripted":
        m = bn_randomize(torchvision.models.mobilenet_v2()).eval()
        return m, [torch.randn(1, 3, 224, 224)], "script"
    if name == "transformer_encoder_scripted":
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)
        m = nn.TransformerEncoder(layer, num_layers=4).eval()
        return m, [torch.randn(2, 16, 256)], "script"
    if name == "control_flow_scripted":
        return ControlFlow().eval(), [torch.randn(3, 8)], "script"
    if name == "two_inputs_scripted":
        return TwoInputs().eval(), [torch.randn(2, 6), torch.randn(2, 4)], "script"
    if name == "recurrent_scripted":
        return Recurrent().eval(), [
            torch.randn(2, 7, 6), torch.randn(4, 2, 8), torch.randn(4, 2, 8)], "script"
    if name == "dense_style_scripted":
        return DenseStyle().eval(), [torch.randn(2, 4, 6, 6)], "script"
    if name == "resampling_scripted":
        return Resampling().eval(), [torch.randn(2, 3, 11, 14)], "script"
    if name == "segmentation_lraspp_scripted":
        m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None)
        return bn_randomize(m).eval(), [torch.randn(1, 3, 96, 128)], "script"
    if name == "causal_decoder_scripted":
        return CausalDecoder().eval(), [torch.randn(2, 5, 32), torch.randn(2, 6, 32)], "script"
    if name == "conv3d_variants_scripted":
        return Conv3dVariants().eval(), [torch.randn(2, 3, 6, 9, 8)], "script"
    if name == "conv_pool_variants_scripted":
        return ConvPoolVariants().eval(), [torch.randn(2, 4, 9, 7), torch.randn(2, 4, 15)], "script"
    if name == "indexing_scripted":
        x = torch.randn(2, 6, 7)
        x[1, 2, 3] = x[1, 2, 5] = 9.0  # a tie: the first index wins
        return Indexing().eval(), [x, torch.randint(0, 10, (2, 5))], "script"
    if name in ("recommender_traced", "recommender_scripted"):
        batch, per_bag = 4, 3
        idx = torch.stack([torch.randint(0, r, (batch * per_bag,)) for r in (20, 20, 20)])
        offsets = torch.tensor([0, 3, 3, 7])  # bag 1 is empty, bag 3 is longer
        return (Recommender().eval(), [torch.randn(batch, 8), idx, offsets, torch.rand(batch * per_bag)],
                "trace" if name.endswith("traced") else "script")
    if name == "handwritten_norms_scripted":
        return HandwrittenNorms().eval(), [torch.randn(3, 7, 16)], "script"
    # Whole models of the families users bring (small configurations, so
    # that the tests stay fast), traced and scripted.
    zoo_name, _, how = name.rpartition("_")
    if zoo_name in ZOO:
        make_model, shape = ZOO[zoo_name]
        m = bn_randomize(make_model()).eval()
        return m, [torch.randn(*shape)], {"traced": "trace", "scripted": "script"}[how]
    raise SystemExit(f"unknown model {name}")


def _zoo():
    import torchvision.models as tvm
    from torchvision.models import segmentation as seg
    from torchvision.models.convnext import CNBlockConfig
    import torchvision.models.video as tvvideo
    return {
        "shufflenet_v2": (lambda: tvm.shufflenet_v2_x0_5(), (1, 3, 64, 64)),
        "swin": (lambda: tvm.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2],
                                             window_size=[4, 4], num_classes=10), (1, 3, 32, 32)),
        "vit": (lambda: tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                              hidden_dim=32, mlp_dim=64, num_classes=10), (1, 3, 32, 32)),
        "convnext": (lambda: tvm.ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)],
                                          num_classes=10), (1, 3, 64, 64)),
        "regnet": (lambda: tvm.regnet_y_400mf(), (1, 3, 64, 64)),
        "efficientnet": (lambda: tvm.efficientnet_b0(), (1, 3, 64, 64)),
        "squeezenet": (lambda: tvm.squeezenet1_1(), (1, 3, 64, 64)),
        "densenet": (lambda: tvm.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16,
                                          num_classes=10), (1, 3, 64, 64)),
        "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=False), (1, 3, 64, 64)),
        "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=False), (1, 3, 75, 75)),
        "mnasnet": (lambda: tvm.mnasnet0_5(), (1, 3, 64, 64)),
        "resnext": (lambda: tvm.ResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1], groups=4, width_per_group=4,
                                       num_classes=10), (1, 3, 64, 64)),
        "fcn": (lambda: seg.fcn_resnet50(weights=None, weights_backbone=None, num_classes=4,
                                         aux_loss=False), (1, 3, 32, 32)),
        "deeplabv3": (lambda: seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                               num_classes=4), (1, 3, 64, 64)),
        "unet": (lambda: UNet(), (1, 3, 32, 32)),
        "transformer_block": (lambda: TransformerBlock(), (2, 12, 32)),
        "ranking_heads": (lambda: RankingHeads(), (2, 3, 16, 16)),
        "audio_frontend": (lambda: AudioFrontend(), (2, 400)),
        # Video: 3-D convolutions, 3-D batch norm and pooling.
        "r3d_18": (lambda: tvvideo.r3d_18(), (1, 3, 4, 32, 32)),
    }


class _LazyZoo(dict):
    def __contains__(self, k):
        if not self:
            self.update(_zoo())
        return dict.__contains__(self, k)


ZOO = _LazyZoo()
ZOO_MODELS = ["shufflenet_v2_traced", "shufflenet_v2_scripted", "swin_traced", "swin_scripted",
              "vit_traced", "vit_scripted", "convnext_traced", "convnext_scripted", "regnet_traced",
              "regnet_scripted", "efficientnet_traced", "efficientnet_scripted", "squeezenet_traced",
              "squeezenet_scripted", "densenet_traced", "densenet_scripted", "googlenet_traced",
              "googlenet_scripted", "inception_v3_traced", "inception_v3_scripted", "mnasnet_traced",
              "mnasnet_scripted", "resnext_traced", "resnext_scripted", "fcn_scripted",
              "deeplabv3_scripted", "unet_traced", "unet_scripted", "transformer_block_traced",
              "transformer_block_scripted", "ranking_heads_traced", "ranking_heads_scripted", "r3d_18_scripted",
              "audio_frontend_traced", "audio_frontend_scripted", "recommender_traced",
              "recommender_scripted"]


def to_torchscript(module, inputs, how):
    if how == "script":
        return torch.jit.script(module)
    # check_trace off: a re-trace of models with shape-dependent Python code
    # (ViT's class token concat) differs in graph structure, not in result.
    traced = torch.jit.trace(module, tuple(inputs), check_trace=False)
    return torch.jit.freeze(traced) if how == "trace_freeze" else traced


def make(name):
    module, inputs, how = build(name)
    return to_torchscript(module, inputs, how), inputs


MODELS = ["mlp_traced", "mlp_scripted", "cnn_scripted", "resnet18_traced_frozen",
          "resnet18_scripted", "mobilenet_v2_scripted", "transformer_encoder_scripted",
          "control_flow_scripted", "two_inputs_scripted", "recurrent_scripted",
          "dense_style_scripted", "resampling_scripted", "segmentation_lraspp_scripted",
          "causal_decoder_scripted", "handwritten_norms_scripted",
          "conv_pool_variants_scripted", "conv3d_variants_scripted", "indexing_scripted"] + ZOO_MODELS

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "i1",
          torch.complex64: "complex64"}


def write(name, out):
    module, inputs = make(name)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):  # no stale inputs or expected outputs of an older run
        if f.endswith(".npy"):
            os.remove(os.path.join(d, f))
    torch.jit.save(module, os.path.join(d, "model.pt"))
    with torch.no_grad():
        outputs = module(*inputs)
    if isinstance(outputs, dict):
        outputs = list(outputs.values())  # the importer keeps insertion order
    if isinstance(outputs, tuple):  # None fields (absent aux outputs) are no outputs
        outputs = [o for o in outputs if o is not None]
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    shapes = []
    for i, x in enumerate(inputs):
        np.save(os.path.join(d, f"input{i}.npy"), x.numpy())
        dims = "x".join(str(s) for s in x.shape)
        shapes.append(f"--input-shape={i}={dims + 'x' if dims else ''}{DTYPES[x.dtype]}")
    for i, y in enumerate(outputs):
        np.save(os.path.join(d, f"expected{i}.npy"), y.numpy())
    with open(os.path.join(d, "shapes.txt"), "w") as f:
        f.write(" ".join(shapes) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", action="append", choices=MODELS)
    args = ap.parse_args()
    for name in args.model or MODELS:
        write(name, args.out)


if __name__ == "__main__":
    main()
