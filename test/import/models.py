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


def bn_randomize(model):
    # Non-trivial running statistics, so BatchNorm is really exercised.
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    return model


def make(name):
    torch.manual_seed(0)
    import torchvision
    if name == "mlp_traced":
        m = MLP().eval()
        x = torch.randn(4, 16)
        return torch.jit.trace(m, x), [x]
    if name == "mlp_scripted":
        return torch.jit.script(MLP().eval()), [torch.randn(4, 16)]
    if name == "cnn_scripted":
        return torch.jit.script(bn_randomize(SmallCNN()).eval()), [torch.randn(2, 3, 16, 16)]
    if name == "resnet18_traced_frozen":
        m = bn_randomize(torchvision.models.resnet18()).eval()
        x = torch.randn(1, 3, 224, 224)
        return torch.jit.freeze(torch.jit.trace(m, x)), [x]
    if name == "resnet18_scripted":
        m = bn_randomize(torchvision.models.resnet18()).eval()
        return torch.jit.script(m), [torch.randn(1, 3, 224, 224)]
    if name == "mobilenet_v2_scripted":
        m = bn_randomize(torchvision.models.mobilenet_v2()).eval()
        return torch.jit.script(m), [torch.randn(1, 3, 224, 224)]
    if name == "transformer_encoder_scripted":
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)
        m = nn.TransformerEncoder(layer, num_layers=4).eval()
        return torch.jit.script(m), [torch.randn(2, 16, 256)]
    if name == "control_flow_scripted":
        return torch.jit.script(ControlFlow().eval()), [torch.randn(3, 8)]
    if name == "two_inputs_scripted":
        return torch.jit.script(TwoInputs().eval()), [torch.randn(2, 6), torch.randn(2, 4)]
    raise SystemExit(f"unknown model {name}")


MODELS = ["mlp_traced", "mlp_scripted", "cnn_scripted", "resnet18_traced_frozen",
          "resnet18_scripted", "mobilenet_v2_scripted", "transformer_encoder_scripted",
          "control_flow_scripted", "two_inputs_scripted"]

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "i1"}


def write(name, out):
    module, inputs = make(name)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    torch.jit.save(module, os.path.join(d, "model.pt"))
    with torch.no_grad():
        outputs = module(*inputs)
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
