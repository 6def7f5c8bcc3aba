"""A training set where WEKA's order of additions decides nb-weka's model: 17,000 rows x 6 numeric
attributes around 1e8 (102,000 cells, above the 100,000 to which that order was once found) whose spreads
lie within rounding noise of their means. Pure-Python arithmetic (no random generator whose stream could
change), shared by ``scripts/weka/make_nb_order_refs.py`` and ``tests/test_review_nb.py``."""

from __future__ import annotations

HEADER = ("@relation weka-order\n" + "".join(f"@attribute a{j} numeric\n" for j in range(6))
          + "@attribute class {k0,k1,k2}\n@data\n")


def rows(n: int, seed: int) -> list[str]:
    """``n`` data lines: class k = row mod 3 scrambled, values 1e8 + k / 2 + noise in [0, 2) with 4 decimals."""
    state = seed
    out = []
    for i in range(n):
        values = []
        for _ in range(7):
            state = (state * 6364136223846793005 + 1442695040888963407) % 2 ** 64   # Knuth's MMIX LCG
            values.append(state >> 33)
        k = values[6] % 3
        line = ",".join(f"{100000000 + k * 0.5 + (v % 20000) / 10000:.4f}" for v in values[:6])
        out.append(f"{line},k{k}")
    return out


def arff_text(n: int, seed: int) -> str:
    return HEADER + "".join(r + "\n" for r in rows(n, seed))


TRAIN = (17_000, 1)
TEST = (300, 2)
