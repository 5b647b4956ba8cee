"""The synthetic corpus ``scripts/golden.py`` writes (TensorFlow, JAX and PyTorch scenarios, the PyTorch jobs on an
Intel GPU) and the PyTorch windows on each vendor's GPU (``corpus_vendors``: ``torchtrace.write_vendor_windows``),
generated once per test run and read by every test that walks it.

Why: ``tests/report/test_properties.py`` walks the whole corpus and ``tests/report/test_words_fit_context.py`` the
PyTorch jobs on an Intel GPU again (45 runs written and analysed twice, 23 s of the latter file on the loaded machine).
A set is written into the run's folder of generated captures (``report_store.generated_folder``: all pytest-xdist
workers of one run share it) under a name of its own and moved into place whole, so a test sees it complete or writes
its own; no test writes into it after.  Its sessions are then a kept tree's: ``report_store.session_report`` analyses
each once per run.  Without that folder (a script) the set is written under the caller's ``scratch`` folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support import report_store
from tests.support.paths import SHARED_PROFILES

#: the corpus' sets, as scripts/golden.py and the property walk name them
SETS = ("corpus_tf", "corpus_jax", "corpus_torch", "corpus_xpu", "corpus_vendors")
#: not generated but laid out: the bare XPlane files of ``../shared/profiles`` (the lone V100 BERT) as runs of a
#: logdir (``run_report.as_logdir_run``), so the property walk and every test of ``run_report.v100_bert_report``
#: read one copy and its session is analysed once per run (it was copied and analysed again by each: 2 s a time)
LONE = "lone"


def _write(name: str, out: Path) -> None:
    """Every run of set ``name`` into ``out``."""
    from synthetic import jaxcapture as J
    from synthetic import scenarios as S
    from synthetic import torchtrace as T

    if name == "corpus_tf":
        for run, make in S.SCENARIOS.items():
            make().write(out)
            try:
                make(fixed=True).write(out, run=run + "_fixed")
            except TypeError:
                pass  # a scenario without a fixed twin
    elif name == "corpus_jax":
        for make in J.JAX_SCENARIOS.values():
            make().write(out)
    elif name in ("corpus_torch", "corpus_xpu"):
        for run in T.SCENARIOS:
            T.write_run(str(out), run, steps=8, xpu=name == "corpus_xpu")  # the same jobs on an Intel GPU
    elif name == "corpus_vendors":  # the windows that say most of the profiler and runtime, on each vendor's GPU
        T.write_vendor_windows(str(out))
    elif name == LONE:
        from tests.support.run_report import as_logdir_run

        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(SHARED_PROFILES.glob("*.xplane.pb")):
            as_logdir_run(f, out)
    else:
        raise ValueError(f"no corpus set {name!r}: one of {', '.join(SETS + (LONE,))}")


def corpus(name: str, scratch: Path) -> Path:
    """The folder holding set ``name`` (one of :data:`SETS`, or :data:`LONE`) whole: this run's, written by the first test to ask;
    without a run's folder, written under ``scratch``."""
    root = report_store.generated_folder()
    if root is None:
        _write(name, scratch / name)
        return scratch / name
    done = root / name
    if not done.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        part = root / f".{name}.{os.getpid()}.part"
        shutil.rmtree(part, ignore_errors=True)
        _write(name, part)
        try:
            os.rename(part, done)  # whole or absent: a worker that looks meanwhile writes its own
        except OSError:  # another worker's is in place: the same set
            shutil.rmtree(part, ignore_errors=True)
    return done
