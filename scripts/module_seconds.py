"""Write ``tests/support/module_seconds.json``: the seconds each test file took, from a full run's ``--junitxml``.

Usage: ``python -m pytest -n 2 --dist loadfile --junitxml=run.xml`` (and the Makefile's pure-Python rerun with
``--junitxml=pure.xml``), then ``python scripts/module_seconds.py run.xml pure.xml``.
The table only orders the files ``make test`` hands its workers (``tests/support/suite_order.py``): a stale or
missing row costs balance, never a test.  A test's time in the XML is its set-up, call and tear-down, so a file's
module fixtures are in its sum.
"""

from __future__ import annotations

import collections
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "support" / "module_seconds.json"


def module_seconds(xml_path: str) -> dict[str, float]:
    """File (``tests/x/test_y.py``) -> the sum of its tests' times in the run's XML."""
    sums: dict[str, float] = collections.defaultdict(float)
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        # pytest writes classname "tests.x.test_y" (or "tests.x.test_y.Class"): the file is the first test_* part
        parts = []
        for part in module:
            parts.append(part)
            if part.startswith("test_") or part == "conftest":
                break
        sums["/".join(parts) + ".py"] += float(case.get("time", 0) or 0)
    return dict(sums)


def main(argv: list[str]) -> int:
    """``module_seconds.py MAIN.xml [PURE.xml]``: the main run's table, and the pure-Python rerun's where given."""
    table = {"source": " ".join(Path(a).name for a in argv[1:3])}
    for column, xml in zip(("seconds", "pure_python_seconds"), argv[1:3]):
        seconds = module_seconds(xml)
        table[column] = {k: round(v, 1) for k, v in sorted(seconds.items())}
        print(f"{column}: {len(seconds)} files, {sum(seconds.values()):.0f} s")
    OUT.write_text(json.dumps(table, indent=0) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
