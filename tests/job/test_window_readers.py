"""The readers of a window (``job.kind._WINDOW_READERS``): one table, asked in order, whose order is the logic
(h37-tidy28: it lived only in ``_window_kind``'s body, a chain of thirteen if-returns; h37-tidy29: the loop's end with
a backlog, a reader of a window with kernels, was asked apart, in ``_work_kind``)."""

from __future__ import annotations

from tb_gpu_advisor.job import kind

#: The windows decided before the readers are asked: kernels measured by their counters, kernels launched under WSL2
#: and none recorded (``_no_kernel_kind``, ``_lost_gpu_kind``).
_DECIDED_BEFORE = {"counters", "wsl2", "wsl2_driver_ok"}


def _order(with_kernels: bool = False) -> list[str]:
    """Each reader of a window with kernels (``with_kernels``) or without, by its window, or its function's name where
    it names none (the work on the CPU)."""
    return [window or read.__name__ for read, window, kernels in kind._WINDOW_READERS if kernels == with_kernels]


def test_each_window_without_kernels_is_named_by_one_reader():
    """Every window ``Kind.window`` may hold is named by exactly one reader of the table, or decided before it."""
    named = [w for _, w, kernels in kind._WINDOW_READERS if w and not kernels]
    assert len(named) == len(set(named)), named
    assert set(named) | _DECIDED_BEFORE == set(kind.WINDOWS) and not set(named) & _DECIDED_BEFORE


def test_the_window_readers_of_a_window_with_kernels_are_the_tables_too():
    """The loop's end whose GPU drains the last step's queue (h37-loopend2) is read off a window with kernels: one
    reader of the same table, before the readers of a window without (so the windows' order lives in one place)."""
    assert _order(with_kernels=True) == ["collectives_only", "loop_ended"]  # a filter of the collectives alone: h37-nccl67
    rows = [kernels for _, _, kernels in kind._WINDOW_READERS]
    assert rows == sorted(rows, reverse=True), rows  # the readers of a window with kernels come first


def test_the_readers_are_asked_in_the_order_the_table_states():
    """The precedences the table's comment gives a reason for, each asked before the next."""
    order = _order()
    before = [("failed", "wsl2_untraced"), ("wsl2_untraced", "unclosed"), ("unclosed", "_cpu_ops_window"),
              ("_cpu_ops_window", "loop_ended"),
              ("loop_ended", "profiler_only"),
              ("profiler_only", "_profiler_window"),  # a window of the profiler's own work, its CPU side recorded: h37-hunt69
              ("_profiler_window", "input_only"),
              ("input_only", "_cpu_loop_window"),
              ("_cpu_loop_window", "copy_only"), ("copy_only", "teardown"), ("teardown", "programs_no_kernel"),
              ("programs_no_kernel", "startup"),  # GPU programs run, their calls recorded, no launch: h37-phase70
              ("startup", "frontend"), ("frontend", "tracing_off"), ("tracing_off", "nvtx_only"),
              ("nvtx_only", "input_on_cpu"), ("input_on_cpu", "collectives_only"),
              ("collectives_only", "kernels_unrecorded"),  # a CPU backend's collectives alone: h37-gloo68
              ("kernels_unrecorded", "ops_unrecorded"),  # GPU programs run, no kernel recorded: h37-jaxunrec70
              ("ops_unrecorded", "_cpu_window"),  # graphs run, none of their ops recorded: h37-hunt70d
              ("_cpu_window", "os_calls_only"),  # OS calls need no host event: h37-window69
              ("os_calls_only", "no_cuda_call")]
    assert [order.index(a) < order.index(b) for a, b in before] == [True] * len(before), order
    assert len(order) == len(before) + 1  # each reader is in one stated precedence
