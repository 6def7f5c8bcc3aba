"""Write the golden model files of format version 1 (made before the plugin layout moved, commit ef487ec).

Run once with the toolkit of that commit; the files and the predictions they gave then are committed
under tests/golden/models_v1/ so that later versions can check how they treat a file of that format.
Usage: python scripts/make_golden_models.py [OUT_DIR]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import toolkit as tk

CASES = [
    ("iris-nb-weka", "iris", {"classifier": "nb-weka"}),
    ("vote-bma-nb", "vote", {"classifier": "bma-nb"}),
    ("glass-nb-gaussian", "glass", {"classifier": "nb-gaussian"}),
    ("ionosphere-liblinear-lr", "ionosphere", {"classifier": "liblinear-lr:C=1,B=1"}),
    ("grain-kl-nb-multinomial", "ReutersGrain-train", {"classifier": "nb-multinomial", "feature_selector": "kl:k=200"}),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    expected = {"made_with_commit": commit, "toolkit_version": tk.__version__, "models": {}}
    for name, dataset, spec in CASES:
        path = out / f"{name}.tkm"
        tk.train(dataset, spec["classifier"], feature_selector=spec.get("feature_selector"), out=path, seed=1)
        test = "ReutersGrain-test" if dataset.startswith("ReutersGrain") else dataset
        _, _, pred = tk.predict(path, test)
        entry = {"dataset": test, "y_pred": pred.y_pred.tolist()}
        if pred.proba is not None:
            entry["proba_first_rows"] = pred.proba[:5].tolist()
        expected["models"][name] = entry
    (out / "expected.json").write_text(json.dumps(expected) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/golden/models_v1"))
