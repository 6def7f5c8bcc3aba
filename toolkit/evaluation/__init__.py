"""Evaluation: resampling, the nested harness, result files, statistics and reports."""
