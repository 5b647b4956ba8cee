"""The slow first op calls are named by what each pays itself, not by which is innermost (h37-hunt70a, issue #37
class 4: a host-only capture's cold start).

The real trace: pramod-b-s/839_Adv_ML_Project ``trace.json`` @6c4879c1 (blob b1421b62, 150,812 B; no licence: read
in /tmp, not kept; survey "Session 70 hunt70a").  The PyTorch recipe's ResNet-18 forward pass of a batch of 5
(``record_function("model_inference")``) with CPU activity alone: cuDNN ops, no runtime call, no device record.  The
first ``aten::conv2d`` > ``convolution`` > ``_convolution`` > ``cudnn_convolution`` takes 3.77 s (a 2.3 ms
``aten::resize_`` inside), the 19 later ones 0.3-31 ms; the first ``batch_norm`` > ``_batch_norm_impl_index`` >
``cudnn_batch_norm`` 300 ms; the first ``aten::add`` 14.0 ms; ``relu_`` > ``clamp_min_`` > ``clamp_min`` 11.7 ms.

Base dbf6cf15 named the innermost slow first calls: "6 first op calls far slower than every later call of the same op
(`aten::add` 14.0 ms, `aten::clamp_min` 6.1 ms, `aten::add_` 2.5 ms; 4.10 s)" -- the 3.77 s convolution, which holds
a slow first ``resize_``, unnamed.  Built here by construction in the real file's layout (op chains, shapes, times)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_report import first_report

_T0 = 1647025982214849


def _forward(path: Path) -> None:
    ev: list[dict] = []
    t = 100.0

    def chain(*calls: tuple[str, float]) -> None:
        """Nested calls, outermost first, each starting 1 us into its caller and running ``dur`` us."""
        for k, (name, dur) in enumerate(calls):
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 3672, "tid": 43344, "ts": _T0 + t + k,
                       "dur": dur, "args": {"External id": len(ev) + 1, "Trace name": "PyTorch Profiler",
                                            "Trace iteration": 0, "Input Dims": [[5, 64, 56, 56]]}})

    for layer in range(20):
        first = layer == 0
        conv = 3_765_909 if first else 300 + 1_500 * (layer % 5)
        chain(("aten::conv2d", conv + 6), ("aten::convolution", conv + 4), ("aten::_convolution", conv + 2),
              ("aten::cudnn_convolution", conv), ("aten::resize_", 2_275 if first else 5))
        t += conv + 10
        bn = 294_857 if first else 60
        chain(("aten::batch_norm", bn + 5), ("aten::_batch_norm_impl_index", bn + 2), ("aten::cudnn_batch_norm", bn))
        t += bn + 10
        chain(("aten::add", 14_020 if first else 20))
        t += (14_020 if first else 20) + 5
        chain(("aten::relu_", 11_685 if first else 15), ("aten::clamp_min_", 7_363 if first else 10),
              ("aten::clamp_min", 6_078 if first else 6))
        t += (11_685 if first else 15) + 5
    ev.insert(0, {"ph": "X", "cat": "cpu_op", "name": "model_inference", "pid": 3672, "tid": 43344,
                  "ts": _T0 + 50, "dur": t, "args": {"External id": 0, "Trace name": "PyTorch Profiler",
                                                    "Trace iteration": 0}})
    ev += [{"ph": "M", "name": "thread_name", "pid": 3672, "tid": 43344, "args": {"name": "thread 43344 ()"}},
           {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
            "ts": _T0, "dur": t + 200, "args": {"Op count": 0}},
           {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": _T0 + t + 300}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": ev}))


def test_the_cold_start_names_the_first_calls_that_paid_it(tmp_path: Path):
    path = tmp_path / "run" / "resnet18.pt.trace.json"
    _forward(path)
    job = first_report(path)["hosts"][0]["job"]
    evidence = job["phase_evidence"]
    assert job["phase"] == "warm-up", job["summary"]
    named = evidence[evidence.index("far slower"):evidence.index("; ")]
    assert "`aten::cudnn_convolution` 3.77 s" in named and "`aten::cudnn_batch_norm`" in named, evidence
    assert named.index("`aten::cudnn_convolution`") < named.index("`aten::cudnn_batch_norm`"), evidence
    assert "`aten::clamp_min`" not in named, evidence  # 6 ms, after the convolution, batch norm and add
