"""Stand-in for the `expecttest` package, which Debian does not ship.

PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations)
imports it only to subclass its TestCase and read ACCEPT; the coverage
harness never runs expect tests, so this is all it needs.
"""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True
