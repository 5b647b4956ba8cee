"""One measured task, run in its own fresh process by ``benchmarks/run.py``.

Why a separate process per task: peak RSS is a per-process high-water mark,
so measuring two tools (or two sizes) in one interpreter would let the first
hide the second; and a fresh interpreter is what a user's first click costs
("cold": nothing parsed, nothing cached -- the file itself is in the OS page
cache for every contender alike).

Usage (internal): ``python benchmarks/bench_child.py TASK PATH [ARG]``.
Prints exactly one JSON object on the last stdout line:
``{"work_s", "import_s", "rss_before_kb", "events", "detail"}``.
``work_s`` covers only the task itself (after imports), so interpreter
start-up, which differs between contenders, is reported separately by the
parent as process wall time.

Tasks:
    parse PATH              bare upb parse of a full XSpace (the floor)
    read PATH               tb_gpu_advisor.formats.xplane.reader.read_timeline
    analyze PATH            tb_gpu_advisor.runtime.pipeline.analyze_host (read + metrics + findings)
    stock PATH TOOL         xprof's xspace_to_tool_data([PATH], TOOL) -- give it a copy
    generate OUT PARAMS     write a synthetic capture (PARAMS: JSON, see run.py)
    stages PATH             analyze_host with peak memory by stage (benchmarks/stages.py)
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from procfs import status_kb  # noqa: E402  (run as a script: benchmarks/ is sys.path[0])


def _rss_kb() -> int:
    """Current VmRSS of this process (kB), to separate import cost from work cost."""
    return status_kb("VmRSS") or 0


def _count_events(timeline: Any) -> int:
    return int(sum(len(line.start_ps) for plane in timeline.planes for line in plane.lines))


def task_parse(path: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    from tb_gpu_advisor.formats.xplane.schema import message_class

    cls = message_class("XSpace")

    def work() -> Any:
        with open(path, "rb") as f:
            return cls.FromString(f.read())

    return work, lambda space: {"planes": len(space.planes)}


def task_read(path: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    from tb_gpu_advisor.formats.xplane.reader import read_timeline

    def summary(tl: Any) -> dict:
        return {"events": _count_events(tl), "planes": len(tl.planes),
                "lines": sum(len(p.lines) for p in tl.planes)}

    return (lambda: read_timeline(path)), summary


def task_analyze(path: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    from tb_gpu_advisor.discover.logdir import HostFile
    from tb_gpu_advisor.formats.xplane.reader import host_name
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    st = os.stat(path)
    host = HostFile(host=host_name(path), path=path, size=st.st_size, mtime_ns=st.st_mtime_ns)

    def summary(rep: Any) -> dict:
        findings = getattr(rep, "findings", None)
        out: dict = {"type": type(rep).__name__}
        if findings is not None:
            out["findings"] = len(findings)
        return out

    return (lambda: analyze_host(host)), summary


def task_stock(path: str, tool: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    def work() -> Any:
        return xspace_to_tool_data([path], tool, {"use_saved_result": False})

    def summary(result: Any) -> dict:
        data = result[0] if isinstance(result, tuple) else result
        return {"output_bytes": len(data) if data is not None else 0}

    return work, summary


def task_generate(out: str, params_json: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from corpus import (
        generate,  # benchmarks/corpus.py: the only place that knows the generator's API
    )

    params = json.loads(params_json)
    return (lambda: generate(out, params)), (lambda info: info)


def task_stages(path: str) -> tuple[Callable[[], Any], Callable[[Any], dict]]:
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from stages import (
        measure,  # benchmarks/stages.py: wraps the pipeline's stages, resets VmHWM between them
    )

    return (lambda: measure(path)), (lambda res: {**res, "events": res["events"]})


TASKS = {"parse": task_parse, "read": task_read, "analyze": task_analyze, "stock": task_stock,
         "generate": task_generate, "stages": task_stages}


def main(argv: list[str]) -> int:
    task, args = argv[0], argv[1:]
    t0 = time.perf_counter()
    work, summarize = TASKS[task](*args)
    import_s = time.perf_counter() - t0
    rss_before = _rss_kb()
    t1 = time.perf_counter()
    result = work()
    work_s = time.perf_counter() - t1
    detail = summarize(result)
    print(json.dumps({"work_s": work_s, "import_s": import_s, "rss_before_kb": rss_before,
                      "events": detail.get("events"), "detail": detail}))
    sys.stdout.flush()
    # Skip teardown: freeing millions of objects is not part of anyone's cost to the user.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
