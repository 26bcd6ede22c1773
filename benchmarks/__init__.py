"""Benchmarks run by `make bench`: each prints figures beside a raw baseline of the same run."""
