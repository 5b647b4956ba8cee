"""A session whose hosts mix one window without GPU work with one good window (issue #37, every window is a report;
h37-probe42w): the good host's report must not suffer.

``_merged_detail`` kept a card's words (the MFU card's precision, the source of its FLOPs) only where every host said
them, while it averaged the numbers over the hosts that had them: a start-up-only host, whose MFU card is n/a, took
the words away, and the session's text read "68.8%: ... TFLOP/s of the None dense peak 989 TFLOP/s ()".  A host
without a number for a card has no say in its words.  Truth by construction: ``torchtrace.write_mixed_window_run``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from contextlib import redirect_stderr, redirect_stdout

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli


def _run(logdir: str, fmt: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", logdir, "--format", fmt, "--cache-dir", "off"])
    return code, out.getvalue()


def _report(logdir: str) -> dict:
    code, out = _run(logdir, "json")
    assert code == 0
    (rep,) = json.loads(out)["reports"]
    return rep


def _card(cards: list[dict], cid: str) -> dict:
    (c,) = [c for c in cards if c["id"] == cid]
    return c


def test_a_start_up_host_leaves_the_good_hosts_mfu_words_whole(tmp_path):
    truth = tt.write_mixed_window_run(str(tmp_path))
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(truth["good"], alone / os.path.basename(truth["good"]))
    mixed, single = _report(truth["folder"]), _report(str(alone))
    assert [h["job"]["kind"] for h in mixed["hosts"]] == ["training", "no_gpu"]
    good = _card(single["headline"], "mfu")["detail"]
    session = _card(mixed["headline"], "mfu")
    assert session["display"] == _card(single["headline"], "mfu")["display"]
    assert session["detail"]["dtype"] == good["dtype"] == "bf16"
    assert session["detail"]["source"] == good["source"] and session["detail"]["hosts"] == 1
    code, text = _run(truth["folder"], "text")
    assert code == 0
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if "Model FLOPs utilisation" in x)
    card = " ".join(x.strip() for x in lines[at:at + 2])  # the card's words wrap onto a second line
    assert "of the bf16 dense peak 989 TFLOP/s (FLOPs from the traced ops' shapes)" in card, card
    assert "None" not in card and "()" not in card, card
    # the good host's own block is its file's alone
    host = next(h for h in mixed["hosts"] if h["job"]["kind"] == "training")
    assert [f["title"] for f in host["findings"]] == [f["title"] for f in single["hosts"][0]["findings"]]
    assert host["headline"] == single["hosts"][0]["headline"]


def test_a_card_no_host_has_a_number_for_keeps_its_shared_reason(tmp_path):
    """The control: where no host has a number (both windows without GPU work), the hosts' words are all there is,
    and the reason every host gives stays."""
    for rank in (0, 1):
        r = tt.Rank(rank=rank, pid=4100 + rank, device=0, node=rank)
        for name, cbid, us in tt.MIXED_START_UP:
            tt._runtime_call(r, name, us, cbid)
        stamp = tt.BASE_NS + int(tt.T0_US * 1000) + rank * 1_000_000
        tt.write_doc(str(tmp_path / f"node{rank}_{4100 + rank}.{stamp}.pt.trace.json"), tt.trace_doc(r, 2))
    rep = _report(str(tmp_path))
    assert len(rep["hosts"]) == 2
    mfu = _card(rep["headline"], "mfu")
    assert mfu["value"] is None and mfu["detail"]["not_available"] == "no GPU kernels in the pass"
