"""The GPUs a capture lists (``Trace.producer["visible_gpus"]``: "8 x NVIDIA H200, Tesla T4") are written and read
in one place, ``model.trace.gpus_in_words`` / ``listed_gpu_models`` (h37-review62).

Why: h37-window62 asked the vendor of the listed GPUs in three new places (``formats.kineto.adapter``,
``job.kind._listed_vendor``, ``rules.base.capture_vendor``), each taking the count off the text with its own
``re.sub(r"^\\d+ x ", ...)`` beside ``job.kind._listed_gpu``'s fourth (which alone stripped blanks and dropped empty
names), and the two formats each wrote the text with their own counting: string surgery on another function's words.
The hygiene test fails on 2aa60c44 (four readers, two writers); the round trip is its control.
"""

from __future__ import annotations

import re
from pathlib import Path

from tb_gpu_advisor.model.trace import gpus_in_words, listed_gpu_models

PACKAGE = Path(__file__).resolve().parents[2] / "tb_gpu_advisor"


def test_the_listed_gpus_round_trip() -> None:
    names = ["NVIDIA H200"] * 8 + ["Tesla T4", "AMD Instinct MI300X", "AMD Instinct MI300X"]
    words = gpus_in_words(names)
    assert words == "8 x NVIDIA H200, Tesla T4, 2 x AMD Instinct MI300X"
    assert listed_gpu_models(words) == ["NVIDIA H200", "Tesla T4", "AMD Instinct MI300X"]
    assert gpus_in_words([]) == "" and listed_gpu_models("") == []


def test_only_the_model_reads_the_counted_layout() -> None:
    """No other module takes the count (``\\d+ x ``) off a listed GPU's words."""
    layout = re.compile(r"\\d\+ x ")
    spelled = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if layout.search(p.read_text()))
    assert spelled == ["model/trace.py"], spelled
