"""FLOPs per step and MFU against the truth of the real sets (issue #20): one Markdown row per run with known FLOPs.

Why: the closing note of the MFU issue, and a check anyone can rerun on their own sets -- our FLOPs per step (from
the trace alone: PyTorch ``record_shapes`` or XLA's HLO) next to ``TRUTH.json``'s executed and model figures, the
step time, MFU, and the top GEMM shape's share of its roofline where the kernels can be told apart.

Usage::

    python scripts/flops_table.py [SET_DIR ...]   # default: ../shared/profiles/real-h100-{jax,torch}
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tb_gpu_advisor.discover import logdir as discovery  # noqa: E402
from tb_gpu_advisor.runtime import pipeline  # noqa: E402

DEFAULT_SETS = [REPO.parent / "shared" / "profiles" / s for s in ("real-h100-jax", "real-h100-torch")]


def rows(set_dir: Path) -> list[str]:
    truth = json.loads((set_dir / "TRUTH.json").read_text())
    out = []
    for session in discovery.discover(str(set_dir)):
        t = truth.get(session.run, {})
        if not t.get("model_flops_per_step"):
            continue
        rep = pipeline.analyze_session(session.run, session.session, session.hosts)
        host = rep.hosts[0]
        mfu = next(c for c in host.headline if c.id == "mfu")
        d = mfu.detail
        ours = d.get("flops_per_step")
        top = host.roofline.rows[0] if host.roofline is not None and host.roofline.rows else None
        ex, mo = t["executed_matmul_flops_per_step"], t["model_flops_per_step"]
        out.append(f"| {set_dir.name}/{session.run} | {d.get('source')} | {ours / 1e12:.4f} | {ex / 1e12:.4f} | "
                   f"{mo / 1e12:.4f} | {min(abs(ours / ex - 1), abs(ours / mo - 1)):.1%} | "
                   f"{rep.headline[0].detail.get('avg_step_ms', 0):.2f} | {d.get('dtype')} | {mfu.display} | "
                   + (f"{top[0]}: {top[8]:.0%} |" if top and top[8] is not None else "- (command buffer) |"))
    return out


def main(argv: list[str]) -> int:
    os.environ.setdefault("TB_GPU_ADVISOR_CACHE_DIR", "off")
    sets = [Path(a) for a in argv] or [s for s in DEFAULT_SETS if s.is_dir()]
    print("| run | FLOPs from | ours TFLOP/step | truth executed | truth model | off by | step ms | dtype | MFU | "
          "top GEMM, % of its roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in sets:
        print("\n".join(rows(s)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
