"""``rules.base.Ctx.pass_or``: the one test of "is the window one unmarked pass?" behind the words a rule or the
report's caps compose for it (h37-review25's list: ``rules._guessed`` asked ``one_pass`` itself, as did
``allocator_churn`` and ``_memory``).  A stand-in host: one step read as the whole capture (an unmarked pass), one
marked step, and several steps."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tb_gpu_advisor.rules import _guessed
from tb_gpu_advisor.rules.base import Ctx


def _window_only(self: Ctx, m) -> None:  # noqa: ANN001 - the stand-in host
    """``Ctx.__init__`` reduced to the window: no framework, vendor or step time is read by these words."""
    self.m, self.steps = m, m.steps.count


def _host(count: int, source: str) -> SimpleNamespace:
    return SimpleNamespace(job=SimpleNamespace(kind=SimpleNamespace(kind="training", confidence="high")),
                           steps=SimpleNamespace(count=count, source=source, iteration_guess=False))


def _ctx(count: int, source: str) -> Ctx:
    ctx = Ctx.__new__(Ctx)
    _window_only(ctx, _host(count, source))
    return ctx


@pytest.mark.parametrize("count, source, said", [
    (1, "whole_capture", "a pass that is a guess"),  # one unmarked pass: the capture's own window
    (1, "single_pass", "a pass that is a guess"),
    (1, "gpu_busy_clusters", "steps that are a guess"),  # one step the capture marks is no pass
    (12, "gpu_busy_clusters", "steps that are a guess"),
])
def test_the_window_words_of_one_pass(count, source, said):
    ctx = _ctx(count, source)
    assert ctx.pass_or("a {step} that is a guess", "steps that are a guess") == said
    assert ctx.the_pass_or("each step") == ("the pass" if said.startswith("a pass") else "each step")


def test_the_low_confidence_cap_asks_the_context(monkeypatch):
    """``_guessed`` composes through ``Ctx.pass_or``: its words follow the context's one test."""
    monkeypatch.setattr(Ctx, "__init__", _window_only)
    m = _host(1, "whole_capture")
    assert _guessed(m) == "a pass that is a guess"
    assert _guessed(_host(3, "gpu_busy_clusters")) == "steps that are a guess"
    monkeypatch.setattr(Ctx, "pass_or", lambda self, template, words: f"<{template}|{words}>")
    assert _guessed(m) == "<a {step} that is a guess|steps that are a guess>"
