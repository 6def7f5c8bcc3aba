import numpy as np, sys
sys.path.insert(0, "/tmp/review_grid")
from gridcheck import *
from toolkit.plugins.text.dcm import DCM
rng = np.random.default_rng(0)
V = 6
protos = [rng.integers(0, 4, V) for _ in range(3)]
rows, ys = [], []
for i in range(60):
    c = i % 3
    rows.append((protos[c] * (1 + i % 2)).tolist()); ys.append(c)
p = write_arff("dcmdegen", [(f"w{j}", "numeric") for j in range(V)], rows, ["A","B","C"], ys, sparse=True)
ds = load(p)
m = DCM().fit(ds.X, ds.y)
print(m.alpha_, m.converged_, m.n_iter_)
print(m.decision_function(ds.X[:5]))
for spec in ["dcm:smoothing=0|0.01|1|100", "c-dcm:smoothing=0|0.01|1|100", "dcm:smoothing=1e10|1e200"]:
    print(spec, compare(spec, ds, Protocol(repetitions=3), label=spec) or "AGREE")
