"""Evaluation and benchmarks: question sets, the eval runner, bench_<target> modules."""
