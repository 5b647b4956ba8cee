"""What the device capture scripts (capture_memory.py, capture_jobs.py) share: where they write, and their log."""
import json
import os
import time
import traceback

#: The device tool brings back what lies under $OUT.
OUT = os.environ.get("OUT", "/tmp/out")


def workdir(name: str) -> str:
    """The folder a script's runs are written under (tarred into $OUT afterwards)."""
    root = f"/tmp/caps/{name}"
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(root, exist_ok=True)
    return root


def log(*a) -> None:
    print(*a, flush=True)


def write_truth(name: str, truth: dict) -> None:
    with open(f"{OUT}/{name}.json", "w") as f:
        json.dump(truth, f, indent=1)


def guarded(fn):
    """Run ``fn`` so that one capture failing leaves the others to run: its traceback printed, its time logged."""
    def run():
        t = time.time()
        try:
            fn()
        except Exception:
            traceback.print_exc()
        log(fn.__name__, "took", round(time.time() - t, 1), "s")
    run.__name__ = fn.__name__
    return run
