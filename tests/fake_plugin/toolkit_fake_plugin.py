"""A third-party plugin exactly as an outside author would write it: a majority-class classifier,
an evaluator and a CLI command. It imports only the standard library and ``toolkit``."""

from toolkit import Capabilities, hookimpl


class MajorityClass:
    """Predicts the most frequent training class (ties to the lowest code)."""

    def __init__(self, *, smoothing: float = 0.0):
        self.smoothing = smoothing

    def get_params(self, deep=True):
        return {"smoothing": self.smoothing}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def fit(self, X, y, sample_weight=None):
        import numpy as np

        y = np.asarray(y)
        self.classes_, counts = np.unique(y, return_counts=True)
        counts = counts + self.smoothing
        self.proba_ = counts / counts.sum()
        return self

    def predict_proba(self, X):
        import numpy as np

        return np.tile(self.proba_, (X.shape[0], 1))

    def predict(self, X):
        import numpy as np

        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def predicted_share(predictions):
    """Share of test instances predicted as the first class."""
    return float((predictions.y_pred == 0).mean())


@hookimpl
def register_classifiers(register):
    register("fake-majority", MajorityClass, description="Majority class (test plugin)",
             param_grid={"smoothing": [0.0, 1.0]},
             capabilities=Capabilities(numeric=True, nominal=True, sparse=True, missing=True))


@hookimpl
def register_evaluators(register):
    register("fake-share", predicted_share, description="Share predicted as the first class (test plugin)",
             greater_is_better=True, needs_proba=False)


@hookimpl
def register_commands(app):
    @app.command("hello")
    def hello(name: str = "world"):
        """Say hello (test plugin command)."""
        print(f"hello {name} from toolkit-fake-plugin")
