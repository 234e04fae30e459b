#!/usr/bin/env python3
"""Regenerates the bundled example: a small scripted MLP classifier saved as
TorchScript (model.pt), an input, and PyTorch's output for it.

Run with Debian's interpreter (it has torch): /usr/bin/python3 make_example.py
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 16)
        self.fc3 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.nn.functional.gelu(self.fc2(h))
        return torch.softmax(self.fc3(h), dim=1)


def main():
    torch.manual_seed(0)
    model = torch.jit.script(Classifier().eval())
    x = torch.randn(2, 8)
    with torch.no_grad():
        y = model(x)
    model.save(os.path.join(HERE, "model.pt"))
    np.save(os.path.join(HERE, "input0.npy"), x.numpy())
    np.save(os.path.join(HERE, "expected_output0.npy"), y.numpy())


if __name__ == "__main__":
    main()
