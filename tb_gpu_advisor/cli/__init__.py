"""The tb-gpu-advisor command: report, diff and precompute.

Importing it makes numpy's OpenBLAS single-threaded in this process and the workers it starts (unless the user
set ``OPENBLAS_NUM_THREADS``), before anything imports numpy.  Why: OpenBLAS starts a thread per further core when
numpy is imported, and each spins for a while before it sleeps, on a core that is free: ``report`` of a small file
took 0.28 s of CPU with it against 0.23 s without (median of 9 alternating runs, 2 cores), and ``import numpy``
alone 0.12-0.13 s against 0.08-0.09 s.  Nothing here calls BLAS (no matrix products): its threads did no work.
The TensorBoard tab is loaded by a process that imported numpy long before, and is left alone.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
