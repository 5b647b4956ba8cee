"""Shared helpers for the several-GPU rules (§2)."""

from __future__ import annotations


def active_gpus(m) -> list:
    return [g for g in m.gpus if g.active]


def is_multi(m) -> bool:
    return len(active_gpus(m)) >= 2


def gpu_table_rows(m) -> list:
    return [[g.gpu, g.name, g.step_ms, g.busy_ms_per_step, g.busy_share, g.kernel_count, g.collective_calls_per_step,
             g.allreduce_ms_per_step, g.first_kernel_offset_ms] for g in active_gpus(m)]


GPU_COLUMNS = ["gpu", "name", "step ms", "busy ms/step", "busy share", "kernels", "AllReduce calls/step",
               "AllReduce ms/step", "first kernel offset ms"]
