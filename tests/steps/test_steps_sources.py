"""steps.detect_steps: each source's precedence, tiling and the stock first/last-drop rule (> 5 steps).

Small hand-built XSpaces (synthetic.builder), one behaviour per test.  Times
in the helpers are microseconds; windows are compared in absolute ps.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.tiny_capture import US, Cap


def _busy(cap: Cap, starts_us: list[float], kernels: int = 4) -> None:
    """One burst of ``kernels`` 10 us kernels (1 us apart) at each start."""
    for s in starts_us:
        for i in range(kernels):
            cap.kernel(s + 11 * i, 10)


def _win(st) -> list[list[int]]:
    return st.host_windows.tolist()


# -- precedence ---------------------------------------------------------------------


def test_steps_line_beats_host_markers_and_uses_group_id():
    cap = Cap()
    steps = cap.gpu.line("Steps", 0xDEADBEEF)
    for i, s in enumerate((0, 100, 200)):
        steps.add(str(40 + i), s * US, 90 * US, group_id=40 + i)
        cap.host_ev("Profiled batch", s, 95, step_num=i)
    _busy(cap, [0, 100, 200])
    st = cap.steps()
    assert st.detection.source == "steps_line" and st.detection.mapped_via == "group_id"
    assert st.ids.tolist() == [40, 41, 42]
    assert _win(st) == [[0, 90 * US], [100 * US, 190 * US], [200 * US, 290 * US]]  # not tiled: the line's own spans


def test_keras_profiled_batch_beats_train_and_roots():
    cap = Cap()
    for i, s in enumerate((0, 100, 200)):
        cap.host_ev("Profiled batch", s, 80, step_num=10 + i)
        cap.host_ev("train", s + 1, 70, step_num=i, _r=1)
        cap.host_ev("FunctionRun", s + 2, 60, _r=1)
    st = cap.steps()
    assert st.detection.source == "keras_profiled_batch"
    assert st.ids.tolist() == [10, 11, 12]


def test_trace_train_beats_root_r_and_tiles_windows():
    cap = Cap()
    for i, s in enumerate((0, 100, 250)):
        cap.host_ev("train", s, 80, step_num=i, _r=1)
        cap.host_ev("FunctionRun", s + 1, 70, _r=1)
    st = cap.steps()
    assert st.detection.source == "trace_train" and st.detection.mapped_via == "correlation_id"
    # step k ends where step k+1 starts (the gap belongs to step k); the last runs past its marker by the loop's turn,
    # the lower median of the earlier gaps, 20 and 70 us (20; h37-forms12b: it ended at its marker, 330; h37-lastturn)
    assert _win(st) == [[0, 100 * US], [100 * US, 250 * US], [250 * US, 350 * US]]


@pytest.mark.parametrize("name, stats, source", [
    ("train_step", {"step_num": 0}, "trace_train"),  # train* with step_num
    ("test", {"_r": 1}, "trace_train"),  # test* with _r
    ("TraceContext", {}, "trace_train"),  # TraceContext needs no stat
    ("train", {}, "whole_capture"),  # a bare `train` event is not a marker
    ("train/inner", {"_r": 1}, "root_r"),  # names with `/` are not markers, but it is a root
])
def test_trace_train_marker_rules(name, stats, source):
    cap = Cap()
    for i, s in enumerate((0, 100, 200)):
        st_i = {k: (i if k == "step_num" else v) for k, v in stats.items()}
        cap.host_ev(name, s, 50, **st_i)
    assert cap.steps().detection.source == source


def test_root_r_most_frequent_name_beats_step_num_stat():
    cap = Cap()
    for i, s in enumerate((0, 100, 200, 300)):
        cap.host_ev("SessionRun", s, 60, _r=1)
        cap.host_ev("Work", s + 1, 10, step_num=i)
    cap.host_ev("Init", 400, 5, _r=1)
    st = cap.steps()
    assert st.detection.source == "root_r" and "SessionRun" in st.detection.note
    assert st.count == 4


def test_step_num_stat_groups_by_value_and_needs_two_values():
    cap = Cap()
    for i, s in enumerate((0, 100, 200)):
        cap.host_ev("Work", s, 10, step_num=i)
        cap.host_ev("More", s + 20, 10, step_num=i)
    st = cap.steps()
    assert st.detection.source == "step_num_stat"
    assert st.ids.tolist() == [0, 1, 2]
    assert _win(st) == [[0, 100 * US], [100 * US, 200 * US], [200 * US, 230 * US]]
    one = Cap()
    for s in (0, 100, 200):
        one.host_ev("Work", s, 10, step_num=5)
    assert one.steps().detection.source == "whole_capture"


def _modules(cap: Cap, spans_us: list[tuple[float, float, str]]) -> None:
    line = cap.gpu.line("XLA Modules", 0xDEADBEEF + 4)
    for s, d, name in spans_us:
        line.add(name, int(s * US), int(d * US))


def test_xla_modules_most_frequent_module_and_device_mapping():
    cap = Cap()
    _busy(cap, [0, 100, 200, 300])
    _modules(cap, [(0, 44, "jit_train_step(5)"), (100, 44, "jit_train_step(5)"), (200, 44, "jit_train_step(5)"),
                   (300, 44, "jit_train_step(5)"), (50, 5, "jit_eval(9)")])
    st = cap.steps()
    assert st.detection.source == "xla_modules" and st.detection.mapped_via == "device"
    assert "jit_train_step(5)" in st.detection.note
    assert _win(st) == [[0, 100 * US], [100 * US, 200 * US], [200 * US, 300 * US], [300 * US, 344 * US]]


def test_host_markers_beat_xla_modules():
    cap = Cap()
    _busy(cap, [0, 100, 200])
    _modules(cap, [(0, 44, "m(1)"), (100, 44, "m(1)"), (200, 44, "m(1)")])
    for i, s in enumerate((0, 100, 200)):
        cap.host_ev("train", s, 60, step_num=i, _r=1)
    assert cap.steps().detection.source == "trace_train"


def test_xla_modules_beat_gpu_busy_clusters():
    cap = Cap()
    _busy(cap, [0, 3000, 6000, 9000])  # would cluster into 4 steps
    _modules(cap, [(0, 44, "m(1)"), (6000, 44, "m(1)")])
    st = cap.steps()
    assert st.detection.source == "xla_modules" and st.count == 2


def test_xla_module_launches_most_executed_module_without_idle_gaps():
    """Raw JAX: host `<module>:XLA GPU module` executions; the GPU never idles, so busy clusters could not split."""
    cap = Cap()
    for i, s in enumerate((0, 100, 200, 300)):
        cap.host_ev("jit_train_step:XLA GPU module", s, 30)
        for k in range(9):  # back-to-back kernels: 100 us of work per 100 us step
            cap.kernel(s + 11 * k + 2, 11, launch_us=s + 3 * k)
    cap.host_ev("jit_eval:XLA GPU module", 50, 5)
    cap.host_ev("jit_eval:XLA GPU module", 250, 5)
    st = cap.steps()
    assert st.detection.source == "xla_module_launches" and st.detection.mapped_via == "correlation_id"
    assert "`jit_train_step`" in st.detection.note
    # tiled from the host executions; the last runs on to the end of its last kernel (300 + 88 + 2 + 11 us)
    assert _win(st) == [[0, 100 * US], [100 * US, 200 * US], [200 * US, 300 * US], [300 * US, 401 * US]]


def test_xla_module_launches_need_two_executions():
    """One execution (a whole-run fori_loop) is no step structure: fall through to the later sources."""
    cap = Cap()
    cap.host_ev("jit_train_loop:XLA GPU module", 0, 30)
    _busy(cap, [20], kernels=30)
    assert cap.steps().detection.source == "whole_capture"


def test_xla_modules_beat_module_launches_and_host_markers_beat_both():
    cap = Cap()
    _busy(cap, [0, 100, 200])
    for s in (0, 100, 200):
        cap.host_ev("m:XLA GPU module", s, 10)
    _modules(cap, [(0, 44, "m(1)"), (100, 44, "m(1)"), (200, 44, "m(1)")])
    assert cap.steps().detection.source == "xla_modules"
    for i, s in enumerate((0, 100, 200)):
        cap.host_ev("train", s, 60, step_num=i, _r=1)
    assert cap.steps().detection.source == "trace_train"


def test_gpu_busy_clusters_split_on_long_idle_gaps():
    cap = Cap()
    starts = [0, 3000, 6000, 9000]  # 3 ms apart, 44 us busy each: gaps ~2.96 ms > max(10 x median, 1 ms)
    _busy(cap, starts)
    st = cap.steps()
    assert st.detection.source == "gpu_busy_clusters" and st.detection.mapped_via == "device"
    # each burst's step runs to the next's start; the last, to its own work's end with nothing recorded after it,
    # holds 43 us of a 3 ms period: partial, dropped, not averaged in (main kept it, mean 2.26 ms; h37-laststep)
    assert st.detection.found == 4 and _win(st) == [[0, 3000 * US], [3000 * US, 6000 * US], [6000 * US, 9000 * US]]
    assert [d.reason.startswith("partial") for d in st.detection.dropped] == [True]
    assert st.detection.dropped[0].window == (9000 * US, 9043 * US)


def test_gpu_busy_clusters_need_gaps_over_1ms():
    cap = Cap()
    _busy(cap, [0, 500, 1000, 1500])  # 0.46 ms gaps: not steps
    st = cap.steps()
    assert st.detection.source == "whole_capture"


def test_whole_capture_note_and_window():
    cap = Cap()
    _busy(cap, [20], kernels=30)
    cap.host_ev("PjitFunction(f)", 0, 10)
    st = cap.steps()
    det = st.detection
    assert det.source == "whole_capture" and det.count == 1 and det.found == 0 and not det.dropped
    assert "whole capture is analysed as one pass" in det.note
    assert _win(st) == [[20 * US, (20 + 11 * 29 + 10) * US]]  # device span, host-only time excluded


def test_whole_capture_host_only():
    cap = Cap()
    cap.host_ev("a", 5, 10)
    cap.host_ev("b", 30, 10)
    st = cap.steps()
    assert st.detection.source == "whole_capture" and _win(st) == [[5 * US, 40 * US]]


# -- last step end, drop rule ----------------------------------------------------------------


def test_last_step_extends_to_device_work_launched_inside_it():
    cap = Cap()
    for i, s in enumerate((0, 100, 200)):
        cap.host_ev("train", s, 50, step_num=i, _r=1)
    cap.kernel(210, 120, launch_us=205)  # launched in the last step, runs past its marker
    cap.kernel(400, 10)  # not launched by the host inside the step: ignored
    st = cap.steps()
    assert _win(st)[-1] == [200 * US, 330 * US]


@pytest.mark.parametrize("n", [5, 6, 8])
def test_first_and_last_dropped_only_when_more_than_5(n):
    cap = Cap()
    starts = [100 * i for i in range(n)]
    for i, s in enumerate(starts):
        cap.host_ev("train", s, 60, step_num=i, _r=1)
    st = cap.steps()
    det = st.detection
    assert det.found == n
    if n > 5:
        assert det.count == n - 2 and st.ids.tolist() == list(range(1, n - 1))
        assert [d.step for d in det.dropped] == [0, n - 1]
        assert "warm-up" in det.dropped[0].reason and "partial" in det.dropped[1].reason
        assert f"dropped first and last of {n} steps" in det.note
        assert _win(st)[0] == [100 * US, 200 * US]
        assert [w.step for w in det.windows] == list(range(1, n - 1))
    else:
        assert det.count == n and not det.dropped and "dropped" not in det.note


def test_drop_rule_trims_per_gpu_windows_of_steps_line():
    cap = Cap()
    steps = cap.gpu.line("Steps", 0xDEADBEEF)
    for i in range(6):
        steps.add(str(i), 100 * i * US, 90 * US, group_id=i)
    st = cap.steps()
    assert st.detection.source == "steps_line" and st.count == 4
    assert st.ids.tolist() == [1, 2, 3, 4]
    assert st.gpu_windows[0].tolist() == [[100 * i * US, (100 * i + 90) * US] for i in range(1, 5)]


def test_drop_rule_applies_to_device_sources_too():
    cap = Cap()
    starts = [3000 * i for i in range(7)]
    _busy(cap, starts)
    st = cap.steps()
    assert st.detection.source == "gpu_busy_clusters" and st.detection.found == 7 and st.count == 5
    assert np.array_equal(st.host_windows[:, 0], np.array(starts[1:-1]) * US)

