"""The answers of a vendor whose device work no capture here reads (Apple's GPU: torch.profiler records no Metal
kernel; Ascend's NPU: its kernels' traces are not analysed): no copy direction, host memory, kernel family, unit,
generation or link is claimed.  One home for them, so each such vendor's module names only what it does know."""

from __future__ import annotations

from collections.abc import Callable

from tb_gpu_advisor.devices.codes import P_UNKNOWN, replace_each


def copy_direction(name: str) -> str | None:
    """No copy of the device's is named in a capture read here: no direction."""
    return None


def host_memory(name: str) -> int:
    """No copy's host memory is named: -1, unknown."""
    return -1


def never(*_args: object) -> bool:
    """No name of the device's work is read: nothing is one of a kernel family."""
    return False


def unknown(*_args: object) -> None:
    """Not known from what a capture of the device holds (its name says no generation's features): None."""


def precision_one(name: str) -> int:
    """No name of the device's work types its data: unknown."""
    return P_UNKNOWN


def speech(code: tuple[tuple[str, str], ...], words: tuple[tuple[str, str], ...]
           ) -> tuple[Callable[[str], str], Callable[[str], str]]:
    """The vendor's ``words`` (a text with the code it quotes for the vendor's device, then its prose words) and
    ``code`` (a PyTorch snippet written for the CUDA device, for the vendor's), from its two lists of swaps: the code's
    first, so a quoted ``torch.cuda.`` becomes the device's API before the prose's swaps see it."""
    return (lambda text: replace_each(replace_each(text, code), words)), (lambda snippet: replace_each(snippet, code))
