"""Entry-point module of the example plugin: registrations only, no heavy imports."""

from toolkit import Capabilities, hookimpl


@hookimpl
def register_classifiers(register):
    from toolkit_centroid._impl import NearestCentroid

    register(
        "nearest-centroid",
        NearestCentroid,
        description="Nearest class centroid (Euclidean), probabilities from a softmax of -distance/temperature",
        param_grid={"temperature": [0.5, 1.0, 2.0]},
        capabilities=Capabilities(numeric=True, nominal=False, sparse=False, missing=False, sample_weight=True),
        references=("Tibshirani et al. (2002), Diagnosis of multiple cancer types by shrunken centroids, PNAS",),
    )


@hookimpl
def register_feature_selectors(register):
    from toolkit_centroid._impl import TopVariance

    register(
        "top-variance",
        TopVariance,
        description="Keep the k columns with the largest variance in the training part",
        param_grid={"k": [2, 5, 10]},
        capabilities=Capabilities(numeric=True, nominal=True, sparse=True, missing=True),
    )
