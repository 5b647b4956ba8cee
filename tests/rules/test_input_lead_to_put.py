"""The input finding says what its number is: with no pipeline event, the lead it states ends at the batch's put
(h37-probe44s, issue #37 class 4; h37-probe43t's *Left* 1).

Since h37-probe43t the untraced lead that stands for a loader is cut at the end of the batch's own put to the device
(``jax.device_put(next(it))``, recorded as ``shard_args`` > ``BufferFromHostBuffer(f32[64,256])``), and the untraced
Python after the put (logging) is named apart as other host time before the step's first op.  The finding still
called its number "the host time before each step's first op": a reader measuring that span on the timeline finds
the put-to-dispatch stretch in it too, and the two sentences then count the same time twice.  Truth by construction
(``synthetic.jaxcapture.fetch_loop``, ``name=None``: marker + fetch + put, then other Python, then the jitted step).
Control: the same loop handing the jitted call a NumPy array made after the put keeps its whole lead, and its words.
"""

from __future__ import annotations

import re
from pathlib import Path

from synthetic import jaxcapture as jc
from synthetic.xla_kernels import TINY_EW, XlaKernel
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

STEPS = 24
PS_PER_MS = 1e9
#: the number the finding states for the lead, in ms (its "(417 us a step, 44.4% of the step)")
_STATED = re.compile(r"the host time ([^(;]*?) \((\d+(?:\.\d+)?) (ms|us) a step")


def _input_finding(root: Path, array_args: tuple = ()):
    """A small MLP's jitted step (10 tiny kernels, 60 us of GPU) fed by an unnamed 300 us fetch and its put, then
    150 us of other Python: the input finding, the metrics and a middle step's (marker start, put end, dispatch)."""
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, jitter=0.0)
    kernels = [XlaKernel(f"fusion_{i}", f"fusion_{i}", "jit(train_step)/add", 6.0, TINY_EW, "fp32", gap_us=0.0)
               for i in range(10)]
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    spans = jc.fetch_loop(cap, kernels, STEPS, None, 300.0, 150.0, put_bytes=64 * 256 * 4, shape="f32[64,256]",
                          array_args=array_args)
    (path,) = jc.JaxScenario("tiny", cap.finish(), cap.truth("tiny", "tiny", "trace_train")).write(root)
    m = host_metrics(read_trace(str(path)))
    found = [f for f in host_report(m, path.stat().st_size).findings if f.rule == "input_bound"]
    assert len(found) == 1
    return found[0], m, spans[len(spans) // 2]


def _stated(summary: str) -> tuple[str, float]:
    """What the finding calls its lead and the ms a step it states for it."""
    said = _STATED.search(" ".join(summary.split()))
    assert said is not None, summary
    return said.group(1), float(said.group(2)) / (1.0 if said.group(3) == "ms" else 1000.0)


def test_the_lead_the_finding_states_is_named_as_ending_at_the_put(tmp_path: Path) -> None:
    f, m, (start, put, dispatch) = _input_finding(tmp_path)
    words, stated = _stated(f.summary)
    to_put, to_op = (put - start) / PS_PER_MS, (dispatch - start) / PS_PER_MS
    # the number with the put's own time said beside it is the time to the put's end (the truth), not to the first op
    whole = stated + m.input.transfer_ms_per_step
    assert abs(whole - to_put) <= 0.01 < abs(whole - to_op)
    # so the words name the put as its end (main: "before each step's first op", the span holding the logging too)
    assert words == "from each step's start to its batch's put to the device", words


def test_control_a_lead_kept_whole_keeps_its_words(tmp_path: Path) -> None:
    """The NumPy array made after the put and handed to the call: the lead runs to the first op, and says so."""
    f, m, (start, put, dispatch) = _input_finding(tmp_path, array_args=(("bool[64,256]", 64 * 256),))
    words, stated = _stated(f.summary)
    assert stated + m.input.transfer_ms_per_step >= (dispatch - start) / PS_PER_MS - 0.01  # the whole lead
    assert words == "before each step's first op", words
