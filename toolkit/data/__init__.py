"""Data: the dataset model, ARFF reading and writing, and text vectorisation."""
