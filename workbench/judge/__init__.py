"""Statistics and verdicts: summary statistics of samples, within-run verdicts, and comparisons between runs."""
