"""Benchmarks run by `make bench`; each module prints figures beside a raw baseline measured in the same run."""
