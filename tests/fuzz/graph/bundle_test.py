#!/usr/bin/python3
"""bundle.misses, the GPU check's rule as the bundle applies it to kiln-ref's
prediction of the GPU's bf16 rounding: it passes a gradient whose terms
cancel and rejects a wrong one."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bundle  # noqa: E402

WANT = {"loss": np.array(1.0), "grad.p1": np.array([3.3e-17, -1e-17]), "grad.p2": np.array([1.0, -0.5])}


def got(**changes):
    out = {name: value.copy() for name, value in WANT.items()}
    for name, value in changes.items():
        out[name.replace("_", ".")] = np.asarray(value, np.float64)
    return out


class MissesTest(unittest.TestCase):
    def test_cancelling_gradient_is_measured_by_the_largest_gradient(self):
        # Graph 1796624847:10 on the GPU: grad.p1 0 and 2e-10 for ~1e-17.
        rounded = got(grad_p1=[0.0, 2e-10])
        self.assertEqual(bundle.misses(rounded, WANT, "1e-1 5e-2"), ["grad.p1"])
        self.assertEqual(bundle.misses(rounded, WANT, "1e-1 5e-2 gradients"), [])

    def test_wrong_gradient_is_rejected(self):
        # 0.06 off where the largest gradient is 1: more than bf16 rounds.
        self.assertEqual(bundle.misses(got(grad_p1=[0.06, 0.0]), WANT, "1e-1 5e-2 gradients"),
                         ["grad.p1"])
        self.assertEqual(bundle.misses(got(grad_p2=[1.2, -0.5]), WANT, "1e-1 5e-2 gradients"),
                         ["grad.p2"])

    def test_loss_keeps_its_own_scale_and_nan_never_passes(self):
        self.assertEqual(bundle.misses(got(loss=1.2), WANT, "1e-1 5e-2 gradients"), ["loss"])
        self.assertEqual(bundle.misses(got(grad_p2=[np.nan, -0.5]), WANT, "1e-1 5e-2 gradients"),
                         ["grad.p2"])


if __name__ == "__main__":
    unittest.main()
