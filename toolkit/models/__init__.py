"""The fitted-model side: pipelines (text -> examples -> features -> classifier), the text step,
training on a whole dataset, model files, and the scikit-learn adapter."""
