"""A TensorFlow program's read of a GPU tensor (``loss.numpy()``, ``float(loss)``) is a sync it asked for (issue #37
class 3, h37-copy69; session 68's left item: "TF sync-once words reach no report").

What a real TF GPU capture records for it (TF 2.3.1 on a V100, mholmeslinder/semi-supervised-cv
``logs/scalars/20201216-223130``, no licence: read from the mirror, not kept): nothing while the Python thread waits
for the GPU's queue to drain (93 ms, the GPU busy with the step's work), then a 38 us ``MemcpyD2H`` on the Python
thread in no op, 103 us after the GPU's last kernel, its 2 us copy on the D2H stream inside it.  A graph's own copies
to the host carry the same name inside the executor's events (``ExecutorState::Process``), and are no read.

The assumption that was wrong: that TensorFlow records no read of a value (``Framework.blocking_read_event`` was
JAX's alone), so a TF eager loop reading its loss every turn had no sync: its idle after the read was "the host's
own ops between steps (work on the CPU, no wait for the GPU)", and TF's sync-once fix (``launch_bound:step_sync``)
reached no report.  By construction (``synthetic.tfcapture.write_eager_read_loop``, the real layout): a tiny eager
loop of three 3 us kernels reading 4 bytes a turn -- one sync a step, named, the sync-once words given; the same
loop reading nothing, no sync.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import tfcapture
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _metrics(tmp_path: Path, read: bool):  # the pipeline's HostMetrics
    d = tmp_path / f"read_{read}" / "plugins" / "profile" / "s"
    d.mkdir(parents=True)
    tfcapture.write_eager_read_loop(str(d / "h.xplane.pb"), read=read, kernel_us=3.0)
    (s,) = discover(str(tmp_path / f"read_{read}"))
    (hf,) = s.hosts
    return host_metrics(formats.read(hf))


def test_a_tf_eager_read_each_turn_is_the_steps_sync(tmp_path: Path):
    m = _metrics(tmp_path, True)
    assert m.syncs.calls_per_step == 1.0 and m.syncs.gpu_idle_ms_per_step > 0.02  # main: 0 syncs
    texts = [a.text for f in evaluate(m) if f.rule == "launch_bound" for a in f.actions]
    assert any(t.startswith("Read results once after the loop") for t in texts), texts


def test_a_loop_reading_nothing_has_no_sync(tmp_path: Path):
    assert _metrics(tmp_path, False).syncs.calls == 0
