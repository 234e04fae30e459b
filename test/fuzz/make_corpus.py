#!/usr/bin/env python3
"""Seed corpus for the TorchScript fuzz target: small real models and their
pieces, each prefixed by the byte that selects the reader (see
FuzzTorchScript.cpp).

    /usr/bin/python3 make_corpus.py OUT_DIR
"""
import io
import os
import sys
import zipfile

import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        y = x.view(1, 2, 1, 3)
        return torch.flatten(torch.max_pool2d(torch.relu(self.bn(self.conv(y))), 1), 1)


def quantized_archives():
    """Models PyTorch quantized: qtensors, per-tensor (qnnpack) and
    per-channel (onednn) quantizers, packed parameters as frozen constants
    and as unfrozen modules' __setstate__ state."""
    from torch.ao.quantization import DeQuantStub, QuantStub, convert, get_default_qconfig, prepare

    class QConv(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.conv, self.fc, self.dq = QuantStub(), nn.Conv2d(1, 2, 1), nn.Linear(3, 2), DeQuantStub()

        def forward(self, x):
            return self.dq(self.fc(torch.flatten(self.conv(self.q(x.view(2, 1, 1, 3))), 1)[:, :3]))

    for engine in ("qnnpack", "onednn"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = engine
        m = QConv().eval()
        m.qconfig = get_default_qconfig(engine)
        prepare(m, inplace=True)
        m(torch.randn(2, 3))
        convert(m, inplace=True)
        traced = torch.jit.trace(m, torch.randn(2, 3))
        for kind, mod in (("traced", traced), ("frozen", torch.jit.freeze(traced))):
            buf = io.BytesIO()
            torch.jit.save(mod, buf)
            yield f"quantized_{engine}_{kind}", buf.getvalue()


def archives():
    torch.manual_seed(0)
    yield from quantized_archives()
    for m in (Tiny(), Conv()):
        m = m.eval()
        for kind in ("script", "trace"):
            mod = torch.jit.script(m) if kind == "script" else torch.jit.trace(m, torch.randn(2, 3))
            buf = io.BytesIO()
            torch.jit.save(mod, buf)
            yield f"{type(m).__name__.lower()}_{kind}", buf.getvalue()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, data in archives():
        for mode in (0, 3):
            with open(os.path.join(out, f"{mode}_{name}.pt"), "wb") as f:
                f.write(bytes([mode]) + data)
                n += 1
        z = zipfile.ZipFile(io.BytesIO(data))
        for entry in z.namelist():
            content = z.read(entry)
            base = entry.replace("/", "_")
            if entry.endswith(".pkl") or entry.endswith(".debug_pkl"):
                mode = 1
            elif entry.endswith(".py"):
                mode = 2
            else:
                continue
            with open(os.path.join(out, f"{mode}_{name}_{base}"), "wb") as f:
                f.write(bytes([mode]) + content)
                n += 1
    print(f"wrote {n} seed inputs to {out}")


if __name__ == "__main__":
    main()
