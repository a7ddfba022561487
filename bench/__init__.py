"""``make bench``: recall_search at archive scale, Python against Go, side by side.

``python -m bench [--sizes 1000,10000] [--repeat N] [--quick]`` archives
deterministic blocks (``bench.data``) in a Go reference instance and measures, on
the same data and in one run, the kernel (Python's ``run_tool`` against Go's
``BenchmarkSearch``), the end-to-end search (``GoTurnHost.exec_tool`` against the
Go's ``/tool/exec``) and the Python path's peak memory, checking byte parity on
every call. It prints the figures with their ratios and writes
``bench/results.json`` and ``bench/RESULTS.md``.
"""
