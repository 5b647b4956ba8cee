"""The profiler's own work is one category of the step ledger, booked once (h37-ledger59).

Session 58 (h37-torch58) measured the GPU's idle while the program's thread waited for CUPTI's activity buffer
requests (Kineto's ``overhead`` events) and left it out of the host-bound and launch-bound findings one by one, while
the ledger still booked it as the host's work, its launch wait, its input wait or nothing recorded.  Every other
number read the ledger: ``wild/profiler_wait_rtx5070ti`` (Livinfly/torchprof-XDU, MIT; a ResNet-50 pass at batch 1 on
an RTX 5070 Ti Laptop GPU) said "for 3.62 ms of it" under the window "host work, the pass (4.52 ms)", and a request
inside a DataLoader fetch stayed the input pipeline's.  The ledger's ``profiler`` category now holds it, painted above
every host category; every finding, window, card and total reads it from there.

Truth by construction: ``synthetic.torchtrace.requested_pass`` writes one host-bound pass with the request inside a
module's Python, inside the op before its launch, between ops, or inside the batch's fetch, and the same pass without
it: the request's time is the profiler's and every other category is the request-free pass's.  Every test here fails
on main (91102037): its ledger has no ``profiler`` category, its window label claimed the request, and its property
checker read no host-bound time.
"""

from __future__ import annotations

import copy

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host
from tests.support.kineto_doc import kept_events
from tests.support.paths import FIXTURES
from tests.support.properties import window_value_problems
from tests.support.run_report import run_report

REQUEST_US = 900.0
FETCH_US = 3000.0
RUN = "profiler_wait_rtx5070ti"
#: the generator's host clock moves 5 us past each request (``buffer_request``): time the host spends, not the
#: profiler, so a category may move by that much
SLACK_MS = 0.012


def _pass(tmp_path, where: str, request_us: float) -> dict:
    name = f"{where}_{int(request_us)}"
    body = tt.requested_pass(request_us, where, fetch_us=FETCH_US if where == "fetch" else 0.0)
    return first_host(tt.write_run(str(tmp_path), tt.Scenario(1, body, [], [], name), steps=1, run=name)[0])


def _rule_saving(host: dict, rule: str) -> float:
    (f,) = [f for f in host["findings"] if f["rule"] == rule and "#" not in f["id"]]
    return f["saving"]["ms_per_step"]


@pytest.mark.parametrize("where", ["python", "launch", "between", "fetch"])
def test_generated_request_is_booked_once_as_the_profilers(tmp_path, where: str) -> None:
    """Main: no ``profiler`` category; the 0.9 ms request was ``host_compute`` (python), ``launch_wait`` (launch),
    ``other`` (between) or ``input_wait`` (fetch: and the input finding's saving held it)."""
    host, control = _pass(tmp_path, where, REQUEST_US), _pass(tmp_path, where, 0.0)
    got, ref = host["breakdown_ms"], control["breakdown_ms"]
    assert got.get("profiler", 0.0) == pytest.approx(REQUEST_US / 1e3, abs=SLACK_MS)
    assert ref.get("profiler", 0.0) == 0.0
    for c, v in got.items():
        if c != "profiler":
            assert v == pytest.approx(ref.get(c, 0.0), abs=SLACK_MS), c
    # the categories still sum to the step, the request's time with them
    assert sum(got.values()) == pytest.approx(sum(ref.values()) + REQUEST_US / 1e3, abs=SLACK_MS)
    if where == "fetch":  # the fetch is the input pipeline's own time, the request none of it
        assert _rule_saving(host, "input_bound") == pytest.approx(FETCH_US / 1e3, abs=SLACK_MS)


def _real() -> dict:
    return run_report(FIXTURES / "wild", RUN).to_dict()["hosts"][0]


def test_real_pass_window_label_and_text_give_one_value() -> None:
    """Main: "for 3.62 ms of it" in the text, "host work, the pass (4.52 ms)" as its window (the 0.88 ms request and
    another finding's 21 us claim in the label only)."""
    (req,) = [e for e in kept_events(FIXTURES / "wild" / RUN) if e.get("ph") == "X" and e.get("cat") == "overhead"]
    host = _real()
    bd = host["breakdown_ms"]
    assert bd.get("profiler", 0.0) == pytest.approx(req["dur"] / 1e3, abs=0.01)  # read by hand: 875 us, inside aten::copy_
    (f,) = [f for f in host["findings"] if f["rule"] == "unexplained_idle"]
    assert "for 3.62 ms of it" in " ".join(f["summary"].split())
    assert [w["label"] for w in f["windows"]] == ["host work, the pass (3.62 ms)"]
    assert "875 us" in f["summary"] and "profiler's own work" in f["summary"]


def test_the_property_catches_a_window_claiming_more_than_its_text() -> None:
    """``one-value``'s window check reads the host-bound phrasing ("for X of it"): main's label is caught."""
    r = copy.deepcopy(run_report(FIXTURES / "wild", RUN))
    h = r.hosts[0]
    assert not window_value_problems(h.host, h)
    (f,) = [f for f in h.findings if f.rule == "unexplained_idle"]
    f.windows[0].label = "host work, the pass (4.52 ms)"
    assert [v for v in window_value_problems(h.host, h) if f.id in v]
