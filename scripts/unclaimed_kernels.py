"""GPU time no kernel family claims, per capture: the kernels whose class is "other" (issue #37, h37-kernelfam).

Why: kernel families (``devices``) decide the precision advice, the matrix-unit checks and "where to look"; a kernel
no family claims is silently left out of all three.  This prints, per capture (a run folder of a logdir), the share of
its kept steps' GPU time in such kernels and the largest of them, so a gap is measured before a name is classified.

Usage::

    python scripts/unclaimed_kernels.py LOGDIR [LOGDIR ...] [--run RUN] [--min-share 0.02] [--top 5]

Each LOGDIR is read as the command line reads it (every run, every host); a kernel's time is its time inside the
kept steps (``KernelStat.step_us``), as the report's ``kernel_classes`` counts it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tb_gpu_advisor import devices, formats, frameworks  # noqa: E402
from tb_gpu_advisor.discover.logdir import discover  # noqa: E402
from tb_gpu_advisor.runtime.pipeline import host_metrics  # noqa: E402


def unclaimed(m) -> tuple[float, float, dict[str, float]]:  # noqa: ANN001 - a HostMetrics
    """(all kernel time, unclaimed kernel time, unclaimed time by kernel name) of one host's kept steps, in us."""
    total, other, names = 0.0, 0.0, {}
    for k in [*m.kernels, *m.kernels_ran_into]:
        c = devices.kernel_class(k.name, tensor_core=k.tensor_core, tc_eligible=k.tc_eligible,
                                 elementwise=k.elementwise, collective=k.collective,
                                 kind=frameworks.stated_kernel_kind(k.name, k.hlo_class))
        total += k.step_us
        if c == "other":
            other += k.step_us
            names[k.name] = names.get(k.name, 0.0) + k.step_us
    return total, other, names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logdirs", nargs="+")
    ap.add_argument("--run", default=None, help="only this run of each logdir")
    ap.add_argument("--min-share", type=float, default=0.0, help="list names of at least this share of GPU time")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args(argv)
    for logdir in args.logdirs:
        for s in discover(logdir):
            if args.run and s.run != args.run:
                continue
            for h in s.hosts:
                try:
                    total, other, names = unclaimed(host_metrics(formats.read(h)))
                except Exception as e:  # noqa: BLE001 - one bad capture must not stop the table
                    print(f"{Path(logdir).name}/{s.run}/{h.host}\terror: {type(e).__name__}: {e}", flush=True)
                    continue
                share = other / total if total else 0.0
                print(f"{Path(logdir).name}/{s.run}/{h.host}\t{share:6.1%}\tof {total:,.0f} us", flush=True)
                for name, us in sorted(names.items(), key=lambda kv: -kv[1])[:args.top]:
                    if total and us / total >= args.min_share:
                        print(f"\t{us / total:6.1%}\t{devices.short_kernel_name(name, 140)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
