"""The peaks table as ``docs/peaks.md`` shows it, made from ``devices.peaks.MODELS`` (so the doc cannot drift)."""

from __future__ import annotations

from tb_gpu_advisor.devices.peaks import DTYPES, GENERATIONS, MODELS


def _num(v: float) -> str:
    return f"{v:,.2f}".rstrip("0").rstrip(".")


def markdown() -> str:
    """One row per model, per device (an MI250X GCD is half its module): TFLOP/s (int8: TOP/s), GB/s; ``est.``: the
    generation runs the dtype but the document gives no figure (estimated); ``—``: the GPU does not run it."""
    rows = ["| Model | Generation | SMs/CUs | Boost MHz | FP64 | FP32 | TF32 | FP16 | BF16 | FP8 | INT8 | GB/s | Source |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in MODELS:
        rates = GENERATIONS[m.generation].rates
        cells = [_num(m.per_device(p) / 1e12) if p in m.flops else ("est." if p in rates else "—") for p in DTYPES]
        rows.append(f"| {m.model} | {m.generation} | {m.sm_count or ''} | {round(m.boost_hz / 1e6) if m.boost_hz else ''} | "
                    + " | ".join(cells) + f" | {_num(m.bandwidth / m.devices / 1e9)} | {m.doc} |")
    return "\n".join(rows) + "\n"


def rates_markdown() -> str:
    """The per-SM (per-CU) dense rates of each generation, as the doc's estimate section shows them."""
    rows = ["| Generation | FP64 | FP32 | TF32 | FP16 | BF16 | FP8 | INT8 |", "|---|---|---|---|---|---|---|---|"]
    for g in GENERATIONS.values():
        cells = [f"{g.rates[p][0]:,}" if p in g.rates else "—" for p in DTYPES]
        rows.append(f"| {g.name} (per {g.unit}) | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
