"""Compares gipf.samples on a run folder with the rows the Rust trainer's
window built from the same games (tests/python.rs writes them).

usage: check_samples.py RUN REFERENCE_DIR EVERY_POSITION SHARE LAMBDA
"""

import os
import sys

import numpy as np

import gipf


def main() -> int:
    run, reference = sys.argv[1], sys.argv[2]
    targets = dict(every_position=sys.argv[3] == "true", root_value_share=float(sys.argv[4]),
                   root_value_lambda=float(sys.argv[5]))
    for name, options in [("plain", {}), ("augmented", {"augment": True, "seed": 11})]:
        data = gipf.samples(run, **options, **targets)
        n = len(data["value"])
        for part, width in [("planes", gipf.NUM_PLANES * gipf.GRID * gipf.GRID), ("policy", gipf.NUM_ACTIONS),
                            ("legal", gipf.NUM_ACTIONS)]:
            expected = np.fromfile(os.path.join(reference, f"{name}-{part}.f32"), dtype="<f4").reshape(-1, width)
            got = data[part].reshape(n, -1)
            assert got.shape == expected.shape, f"{name} {part}: {got.shape} != {expected.shape}"
            assert np.array_equal(got, expected), f"{name} {part}: {np.abs(got - expected).max()}"
        value = np.fromfile(os.path.join(reference, "value.f32"), dtype="<f4")
        assert np.array_equal(data["value"], value), "values"
        assert (data["symmetry"] == 0).all() == (name == "plain")
    print(f"{n} samples equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
