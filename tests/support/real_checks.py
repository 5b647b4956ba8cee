"""The checks of real GPU captures against their TRUTH.json, in one place.

Why here: ``tests/crosscheck/test_real_h100_jax.py`` and ``scripts/real_check.py`` must
judge a run the same way, and both must judge it the way
``../shared/tools/score_real.py`` (the spec) does.  This module lives next to
``tests/support/stock_tool.py`` (which the cross-check also needs); the script puts
the repository root on ``sys.path`` to import both, as
``benchmarks/large_logdir.py`` does.

A *set* is a TensorBoard logdir whose runs are named in ``<set>/TRUTH.json``.
Our report is made in process by the CLI's own code
(``tb-gpu-advisor report SET --run RUN --format json``), so what is checked is
exactly what the CLI prints.  Nothing here reads the capture format: a future
PyTorch set with the same TRUTH.json works as soon as the CLI reads it.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tests.support.paths import REPO

REPO = REPO
#: The real JAX and PyTorch H100 sets; read in place, never copied into the repository.
REAL_JAX_SET = REPO.parent / "shared" / "profiles" / "real-h100-jax"
REAL_TORCH_SET = REPO.parent / "shared" / "profiles" / "real-h100-torch"
WILD_TORCH_SET = REPO.parent / "shared" / "profiles" / "wild-torch"

BAD = {"warning", "critical"}
#: Tolerances from score_real.py (the spec) and from issue #9 (stock cross-check).
STEP_REL = 0.25
SLEEP_FLOOR = 0.8
SIXTEEN_MIN, FP32_SIXTEEN_MAX, UNKNOWN_SKIP = 0.5, 0.05, 0.9
STOCK_REL = 0.10

#: Check names, in table order.
CHECKS = ("diagnosis", "not", "step", "16-bit", "stock")


@dataclass(frozen=True)
class Check:
    """One verdict and the numbers behind it; ``ok is None``: the check does not apply, ``detail`` says why."""

    name: str
    ok: bool | None
    detail: str

    @property
    def mark(self) -> str:
        """Table cell: ok, FAIL or n/a."""
        return "n/a" if self.ok is None else "ok" if self.ok else "FAIL"


@dataclass
class RunResult:
    """Our report for one run of a set (or why there is none)."""

    run: str
    report: dict[str, Any] | None
    error: str = ""


def load_truth(set_dir: Path) -> dict[str, dict[str, Any]]:
    """run -> truth entry of ``<set_dir>/TRUTH.json``."""
    return json.loads((Path(set_dir) / "TRUTH.json").read_text())


def our_report(set_dir: Path, run: str) -> RunResult:
    """The JSON report ``tb-gpu-advisor report SET --run RUN --format json`` prints, made in process.

    Goes through the CLI's parser and ``run`` function so selection (newest
    session, all hosts) and serialisation are the CLI's, not a re-implementation.  A run of a kept set (the
    repository's fixtures, ``../shared``) is analysed once per test run: the CLI's own report cache, in a folder every
    worker of the run shares (``report_store.shared_cache_dir``), answers the next test that asks for it.
    """
    from tb_gpu_advisor.cli import main as cli
    from tests.support.report_store import shared_cache_dir

    argv = ["report", str(set_dir), "--run", run, "--format", "json"]
    shared = shared_cache_dir(Path(set_dir))
    if shared is not None:  # a kept set: the CLI's report cache of this test run, shared by every worker
        argv += ["--cache-dir", str(shared)]
    args = cli.build_parser().parse_args(argv)
    if shared is not None:
        _stored_first(args)
    out, err = io.StringIO(), io.StringIO()
    rc = args.func(args, stdout=out, stderr=err)
    if rc not in (0, 1):
        return RunResult(run, None, f"exit {rc}: {' '.join(err.getvalue().split())[:300]}")
    return RunResult(run, json.loads(out.getvalue()))


def _stored_first(args: Any) -> None:
    """Each session the command ``args`` will report put into its report cache from the run's report store
    (``report_store.session_report``) where the cache lacks it: the property walk analyses every session of the kept
    sets there anyway, so the CLI reads the store's report back through its own cache -- as every test after the
    first already did -- instead of analysing the session a second time in the run.  Only with the settings the store
    analyses with (the environment's: no ``--params``, ``--net-gbps``, ...) and every host of the session; else the
    command analyses as before."""
    from tb_gpu_advisor.cli import options as cli_opts
    from tb_gpu_advisor.cli.report import select_sessions
    from tb_gpu_advisor.common.options import UserOptions
    from tests.support.report_store import session_report

    advisor = cli_opts.advisor(args)
    if advisor.options != UserOptions.of(None) or not advisor.cache.enabled:
        return
    for session, chosen in select_sessions(advisor, args.run, args.session, args.host):
        key = advisor.session_key(session)
        if tuple(chosen) == tuple(session.hosts) and not os.path.exists(advisor.cache.path_for(key)):
            advisor.cache.put(key, session_report(session))


def newest_session_files(set_dir: Path, run: str) -> list[str]:
    """Profile files of the run's newest session, as the CLI selects them (for the stock tool)."""
    from tb_gpu_advisor.cli.report import select_sessions
    from tb_gpu_advisor.runtime.advisor import Advisor

    return [hf.path for _, hosts in select_sessions(Advisor(str(set_dir), cache="off"), run, None, None)
            for hf in hosts]


# --------------------------------------------------------------------------- report fields


def bad_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Warning/critical findings in report order (the report ranks them)."""
    return [f for f in report.get("findings") or [] if f.get("severity") in BAD]


def top_finding(report: dict[str, Any]) -> str | None:
    """Rule of the top-ranked warning/critical finding, None when healthy."""
    bad = bad_findings(report)
    return bad[0]["rule"] if bad else None


def gpu_step_ms(report: dict[str, Any]) -> float | None:
    """``hosts[0].gpus[0].step_ms``: the first GPU's step time, the field score_real.py reads."""
    hosts = report.get("hosts") or [{}]
    gpus = hosts[0].get("gpus") or [{}]
    return gpus[0].get("step_ms")


def _sixteen_bit(report: dict[str, Any]) -> tuple[float | None, float | None]:
    """(headline 16-bit share, detail.unknown_precision_share) of the first host."""
    hosts = report.get("hosts") or [{}]
    card = {h.get("id"): h for h in hosts[0].get("headline") or []}.get("sixteen_bit_share", {})
    return card.get("value"), (card.get("detail") or {}).get("unknown_precision_share")


# --------------------------------------------------------------------------- checks (score_real.py)


def check_diagnosis(truth: dict[str, Any], report: dict[str, Any]) -> Check:
    """Top warning/critical finding is one of expect_top; with expect_top empty, none at all (``allow`` aside)."""
    bad = bad_findings(report)
    want = truth.get("expect_top") or []
    if want:
        top = top_finding(report)
        return Check("diagnosis", top in want, f"top={top} want one of {want}")
    bad = [f for f in bad if f["rule"] not in (truth.get("allow") or [])]
    alarms = ", ".join(f"{f['rule']}({f['severity']})" for f in bad)
    return Check("diagnosis", not bad, f"false alarm: {alarms}" if bad else "healthy")


def check_not(truth: dict[str, Any], report: dict[str, Any]) -> Check:
    """No rule of expect_not at warning or above."""
    if not truth.get("expect_not"):
        return Check("not", None, "truth names no expect_not rules")
    hit = [f["rule"] for f in bad_findings(report) if f["rule"] in truth["expect_not"]]
    return Check("not", not hit, f"fired {hit}" if hit else f"none of {truth['expect_not']}")


def check_step(truth: dict[str, Any], report: dict[str, Any]) -> Check:
    """GPU step time vs the step measured outside the profiler (score_real.py's cases, in its order).

    Does not apply without device_step_ms, to eager runs, or with only an
    injected gap (whose effect on the step the truth does not pin down).
    """
    step, dev = gpu_step_ms(report), truth.get("device_step_ms")
    if not dev:
        return Check("step", None, "truth has no device_step_ms")
    if step is None:
        return Check("step", False, "no GPU step time")
    if truth.get("eager"):
        return Check("step", None, "eager run: device_step_ms is not a jitted step")
    sleep = truth.get("injected_sleep_ms") or 0
    if sleep:
        floor = SLEEP_FLOOR * (sleep + dev)
        return Check("step", step >= floor, f"step {step:.2f} ms, want >= {floor:.2f}")
    if truth.get("injected_gap_ms"):
        return Check("step", None, "injected gap only: the truth does not pin the step down")
    return Check("step", abs(step - dev) <= STEP_REL * dev, f"step {step:.2f} ms vs measured {dev:.2f}")


def check_sixteen_bit(truth: dict[str, Any], report: dict[str, Any]) -> Check:
    """16-bit share of the kernel time whose precision is known, by the run's dtype.

    Does not apply when the truth names no bf16/fp16/fp32 dtype, or when
    >= 90% of kernel time has unknown precision (nothing knowable from the capture).
    """
    dtype = truth.get("dtype")
    if dtype not in ("bfloat16", "float16", "float32"):
        return Check("16-bit", None, f"truth dtype {dtype!r}: no 16-bit verdict")
    share, unknown = _sixteen_bit(report)
    if unknown is not None and unknown >= UNKNOWN_SKIP:
        return Check("16-bit", None, f"{unknown:.0%} of kernel time has unknown precision")
    if share is not None and unknown:
        share = share / (1 - unknown)
    shown = "none" if share is None else f"{share:.3f}"
    suffix = f" (unknown precision {unknown:.3f})" if unknown else ""
    if dtype == "float32":
        return Check("16-bit", share is not None and share <= FP32_SIXTEEN_MAX,
                     f"16-bit share {shown}{suffix}, want <= {FP32_SIXTEEN_MAX}")
    return Check("16-bit", share is not None and share >= SIXTEEN_MIN,
                 f"16-bit share of known-precision kernel time {shown}{suffix}, want >= {SIXTEEN_MIN}")


def check_stock(report: dict[str, Any], stock_ms: float | None, why: str = "stock found no steps") -> Check:
    """Our GPU step time within 10% of the stock tool's average step time; n/a (``why``) where stock has none."""
    if not stock_ms:
        return Check("stock", None, why)
    ours = gpu_step_ms(report)
    if ours is None:
        return Check("stock", False, f"no GPU step time; stock {stock_ms:.2f} ms")
    return Check("stock", abs(ours - stock_ms) <= STOCK_REL * stock_ms,
                 f"ours {ours:.2f} ms vs stock {stock_ms:.2f} ms (x{ours / stock_ms:.3f})")


#: The truth checks a real-capture test runs per run, by test id.
TRUTH_CHECKS = {"diagnosis": check_diagnosis, "expect_not": check_not, "step_time": check_step,
                "sixteen_bit": check_sixteen_bit}


def judge(truth: dict[str, Any], result: RunResult, run: str, check: Callable[[dict[str, Any], dict[str, Any]], Check]) -> None:
    """Fail on a missing report or a failed check; skip, with the check's reason, where it does not apply."""
    import pytest

    if result.report is None:
        pytest.fail(f"{run}: no report: {result.error}", pytrace=False)
    verdict = check(truth, result.report)
    if verdict.ok is None:
        pytest.skip(f"{run}: {verdict.detail}")
    if not verdict.ok:
        pytest.fail(f"{run} [{verdict.name}]: {verdict.detail} -- truth: {truth.get('note', '')}", pytrace=False)


def truth_checks(truth: dict[str, Any], report: dict[str, Any]) -> dict[str, Check]:
    """The score_real.py checks of one run by name, n/a included ('right on every check' = none FAIL)."""
    found = (check_diagnosis(truth, report), check_not(truth, report),
             check_step(truth, report), check_sixteen_bit(truth, report))
    return {c.name: c for c in found}


# --------------------------------------------------------------------------- stock tool


def stock_step_ms(paths: list[str]) -> tuple[float | None, str]:
    """(stock average step time in ms or None, why None) for one session; runs the stock converter.

    Call it in a worker process (``tests/support/stock_tool.py`` says why).  The
    average is the mean of overview_page's per-step rows (``stepTimeMs`` of
    table 1), at full precision; its ``p.steptime_ms_average`` is the same
    mean rounded to 0.1 ms, too coarse for a 2.4 ms step.
    """
    from tests.support.stock_tool import stock_tools

    if not paths:
        return None, "no profile files"
    try:
        overview = stock_tools(paths, ("overview_page",))["overview_page"]
    except Exception as e:  # noqa: BLE001 -- the stock converter's failure is a result to report
        return None, f"stock tool failed: {type(e).__name__}: {e}"[:200]
    table = overview[1] if isinstance(overview, list) and len(overview) > 1 else {}
    cols = [c["id"] for c in table.get("cols") or []]
    if "stepTimeMs" not in cols:
        return None, "stock overview_page has no step table"
    i = cols.index("stepTimeMs")
    steps = [float(r["c"][i]["v"]) for r in table.get("rows") or []]
    mean = sum(steps) / len(steps) if steps else 0.0
    if mean <= 0:
        return None, f"stock tool found no steps (average {table.get('p', {}).get('steptime_ms_average')})"
    return mean, ""


def stock_step_for_run(job: tuple[str, str]) -> tuple[str, float | None, str]:
    """Worker-process entry: (run, stock step ms or None, why None) for ``(set_dir, run)``."""
    set_dir, run = job
    try:
        paths = newest_session_files(Path(set_dir), run)
    except Exception as e:  # noqa: BLE001 -- e.g. a run without profiles
        return run, None, f"no session: {e}"[:200]
    return (run, *stock_step_ms(paths))


def stock_available() -> bool:
    """Whether the stock converter (xprof, tensorboard-plugin-profile) is installed."""
    try:
        import xprof.convert.raw_to_tool_data  # noqa: F401
    except ImportError:
        return False
    return True
