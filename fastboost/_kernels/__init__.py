"""Compiled kernels (numba only). They hold no Python objects, validate nothing
and write into preallocated outputs; ``fastboost.estimators`` validates and wraps."""
