#!/usr/bin/env python3
"""Small TorchScript models for the importer's lit tests.

    /usr/bin/python3 make_model.py NAME OUT.pt
"""
import sys

import torch
import torch.nn as nn


class Unsupported(nn.Module):
    """Two operators Cuvil does not translate (their result's shape depends
    on the data): nonzero twice, masked_select once."""

    def forward(self, x):
        h = torch.nonzero(x)
        v = torch.masked_select(x, x > 0)
        return h.sum() + v.sum() + torch.nonzero(x * 2).sum()


class Raises(nn.Module):
    def forward(self, x):
        if x.size(0) != 2:
            raise ValueError("the batch must hold exactly two samples")
        return x * 2


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x, scale: float = 2.0):
        return torch.relu(self.fc(x)) * scale


class Limits(nn.Module):
    """Recurrent and resampling cases the importer reports as unsupported:
    an LSTM with projections, anti-aliased bicubic resampling; and (with a
    dynamic sequence length) a GRU it cannot unroll."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, proj_size=3)
        self.gru = nn.GRU(4, 5)

    def forward(self, seq, img):
        y, _ = self.lstm(seq)
        g, _ = self.gru(seq)
        up = nn.functional.interpolate(img, scale_factor=0.5, mode="bicubic", antialias=True)
        return y.sum() + g.sum() + up.sum()


class Effects(nn.Module):
    """A print and asserts on tensor data: they must survive import and
    optimisation, and fail the run when violated."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        assert x.size(1) == 4  # known at import time: vanishes
        assert bool((x > -100.0).all()), "inputs must be > -100"
        y = self.fc(x)
        scaled = torch.tanh(y) * 3.0  # used only on a path the import rules out
        if x.size(0) > 100:
            return scaled
        print("logits {x}:", y)
        if y.sum() > 1000.0:
            raise ValueError("logits too large")
        return torch.relu(y)


class InPlace(nn.Module):
    """In-place ops the importer turns into values: on a tensor, through a
    reshape view (the write reaches the tensor), and copy_ with broadcast."""

    def forward(self, x):
        y = torch.zeros(2, 3)
        y.copy_(x[1])           # broadcast [3] -> [2, 3]
        flat = y.view(-1)
        flat.mul_(2.0)          # writes through to y
        row = y[1]              # a strided view: sees the writes below
        y.relu_()
        y.add_(x)
        return y, row


class InPlaceStrided(nn.Module):
    """In-place writes into a select, a strided slice and a transpose: they
    reach the tensor; a view taken before sees them."""

    def forward(self, x):
        y = x.clone()
        row = y[1]
        y[0].add_(1.0)
        y[:, ::2] = 0.5
        y.t()[1] *= 10.0
        return y, row


class InPlaceExpanded(nn.Module):
    """An in-place write into an expanded view: refused with the reason."""

    def forward(self, x):
        y = x[0:1].expand(3, 3)
        y.add_(1.0)
        return y


class DynamicBatch(nn.Module):
    """x.view(x.size(0), -1) with a '?' batch dimension."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.view(y.size(0), -1))


class ValueView(nn.Module):
    """A view whose size is computed from tensor data (int(n.sum()))."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x, n):
        y = torch.relu(self.conv(x))
        k = int(n.sum())
        return torch.relu(self.fc(y.view(k, -1, 8)))


class RunTimeFactories(nn.Module):
    """Tensors whose sizes come from '?' dimensions: positions
    (torch.arange(t)), a causal mask (torch.triu of torch.full((t, t))),
    zeros concatenated along the features, a class token expanded to the
    batch (x.expand(b, -1, -1))."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(16, 4)
        self.cls = nn.Parameter(torch.randn(1, 1, 6))

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        h = x + self.pos(torch.arange(t))
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        att = torch.softmax(h @ h.transpose(1, 2) + mask, dim=-1) @ h
        att = torch.cat([att, torch.zeros(b, t, 2)], -1)
        return torch.cat([self.cls.expand(b, -1, -1), att], 1)


class SequenceLoop(nn.Module):
    """A GRU cell stepped over a run-time sequence length with x[:, t]."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 6)

    def forward(self, x):
        h = torch.zeros(x.size(0), 6)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return h


class DataSizedZeros(nn.Module):
    """A factory whose size is read from tensor data: refused."""

    def forward(self, x):
        return torch.zeros(int((x > 0).sum()))


class DynamicQuantized(nn.Module):
    """quantize_dynamic's targets: an LSTM, a GRU and a linear layer;
    make_model.py dynamic_quantized OUT.pt ENGINE quantizes it under that
    engine (qint8 weights; float16 needs FBGEMM, which Debian's PyTorch
    lacks)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)
        self.gru = nn.GRU(6, 5, batch_first=True)
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        return self.fc(y[:, -1])


class WhileLoop(nn.Module):
    """A loop on tensor data: it carries y, the step count (a Python int)
    and the condition, not the weights or x, which it only reads; the
    `and` becomes a data-dependent if whose branches give Python bools."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        steps = 0
        while bool(y.abs().max() > 0.5) and steps < 8:
            y = torch.tanh(self.lin(y)) * 0.5 + x * 0.0
            steps += 1
        return y, steps


def dynamic_quantized(engine):
    m = DynamicQuantized().eval()
    torch.backends.quantized.engine = engine
    return torch.ao.quantization.quantize_dynamic(m, {nn.LSTM, nn.GRU, nn.Linear}, dtype=torch.qint8)


MODELS = {"unsupported": Unsupported, "raises": Raises, "tiny": Tiny, "limits": Limits,
          "effects": Effects, "inplace": InPlace, "inplace_strided": InPlaceStrided,
          "inplace_expanded": InPlaceExpanded,
          "dynamic_batch": DynamicBatch, "value_view": ValueView, "while_loop": WhileLoop,
          "run_time_factories": RunTimeFactories, "data_sized_zeros": DataSizedZeros,
          "sequence_loop": SequenceLoop}

if __name__ == "__main__":
    torch.manual_seed(0)
    name, out = sys.argv[1], sys.argv[2]
    if name == "dynamic_quantized":
        torch.jit.script(dynamic_quantized(sys.argv[3])).save(out)
    else:
        torch.jit.script(MODELS[name]().eval()).save(out)
