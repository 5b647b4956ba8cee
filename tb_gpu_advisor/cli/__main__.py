"""``python -m tb_gpu_advisor.cli``: the ``tb-gpu-advisor`` command without the console script (CI jobs, score_real)."""

import sys

from tb_gpu_advisor.cli.main import main

sys.exit(main())
