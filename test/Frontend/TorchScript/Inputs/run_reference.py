#!/usr/bin/env python3
"""Runs a scripted model in PyTorch on .npy inputs and compares its output
with a Cuvil output file (allclose rtol 1e-4, atol 1e-5).

    /usr/bin/python3 run_reference.py MODEL.pt CUVIL_OUTPUT.npy INPUT.npy...
"""
import sys

import numpy as np
import torch

model = torch.jit.load(sys.argv[1]).eval()
inputs = [torch.from_numpy(np.load(p)) for p in sys.argv[3:]]
with torch.no_grad():
    want = model(*inputs).numpy()
got = np.load(sys.argv[2])
if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
    print(f"MISMATCH: got {got.shape}, PyTorch {want.shape}; "
          f"max error {np.abs(got - want).max() if got.shape == want.shape else 'n/a'}")
    sys.exit(1)
print(f"ok: {got.shape}")
