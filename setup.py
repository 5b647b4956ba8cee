"""tb-gpu-advisor: the TensorFlow GPU performance guide as a TensorBoard tab and a CLI."""

import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent
#: The UTF-8 check the compiled readers share (``#include``d by _csqlite.c and kineto/_cscan.c): in ``depends`` to
#: rebuild them when it changes, in ``package_data`` so that an sdist carries it.
UTF8_H = "tb_gpu_advisor/formats/_utf8.h"


def _optional_c(module: str, **kwargs: object) -> Extension:
    """The C extension ``module`` (its one source beside it), ``optional``: without a C compiler its build fails
    quietly and the install goes on -- the pure-Python reader then runs, as PyYAML and msgspec fall back.  Only
    Python's headers are needed (the C reads numpy arrays through the buffer protocol: numpy is no build need)."""
    return Extension(module, sources=[module.replace(".", "/") + ".c"], extra_compile_args=["-O3", "-std=c99"],
                     depends=[UTF8_H], optional=True, **kwargs)


#: The compiled XPlane decoder (tb_gpu_advisor/formats/xplane/compiled.py says why and how it is chosen).
CWIRE = _optional_c("tb_gpu_advisor.formats.xplane._cwire")
#: The compiled PyTorch (Kineto) JSON scanner (tb_gpu_advisor/formats/kineto/compiled.py).
CSCAN = _optional_c("tb_gpu_advisor.formats.kineto._cscan")
#: The compiled memory-snapshot pickle reader (tb_gpu_advisor/formats/snapshot/compiled.py).
CPICKLE = _optional_c("tb_gpu_advisor.formats.snapshot._cpickle")
#: The compiled SQLite column reader of every SQLite format (tb_gpu_advisor/formats/sqlite_compiled.py).  No SQLite
#: header or ``libsqlite3.so`` development link is needed: it declares the few SQLite functions it calls and finds
#: them when imported, in the library Python's own ``_sqlite3`` uses (``dlopen``; ``-ldl`` for glibc < 2.34).
CSQLITE = _optional_c("tb_gpu_advisor.formats._csqlite",
                      libraries=["dl"] if sys.platform.startswith("linux") else [])

setup(
    name="tb-gpu-advisor",
    version="0.1.0",
    description="TensorBoard plugin and CLI that turn GPU profiles into ranked, quantified findings",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["tb_gpu_advisor", "tb_gpu_advisor.*"]),
    package_data={"tb_gpu_advisor.serve": ["static/*", "static/**/*"], "tb_gpu_advisor.formats": ["_utf8.h"]},
    include_package_data=True,
    ext_modules=[CWIRE, CSCAN, CPICKLE, CSQLITE],
    install_requires=[
        "tensorboard>=2.14",
        "tensorboard-plugin-profile>=2.15",
        "werkzeug>=2.0",
        "numpy>=1.23",
        "protobuf>=3.20",
        # PyTorch traces: the typed decode (~5x the stdlib's) and the compiled scanner's metadata and args; without it
        # the reader still runs on the stdlib's json (issue #38: report 1.2-1.5x msgspec's decode, 2.2-2.9x without)
        "msgspec>=0.18",
    ],
    extras_require={
        # pytest-xdist: `make test` runs the suite on two workers, a test file to a worker (Makefile: PYTEST_WORKERS)
        "test": ["pytest>=7", "pytest-xdist>=3.5", "playwright>=1.40", "psutil", "moto[server]>=5", "boto3>=1.26", "fsspec", "msgspec>=0.18",
                 # the independent reference of tests/test_hta_crosscheck.py (Meta's PyTorch trace analyser)
                 "HolisticTraceAnalysis>=0.5",
                 # tests/serve/test_mcp_server.py drives the real server with the SDK's own client
                 "mcp>=2.3,<3",
                 # the independent reference of tests/crosscheck/test_nsys_ai.py (Nsight Systems exports); without
                 # extras, so its own ``mcp<2`` extra does not meet ours
                 "nsys-ai>=0.3,<0.4"],
        # PyTorch traces read ~2x faster (typed decode of the fields used); the stdlib reads them without it
        "fast": [],  # msgspec is a core dependency now; kept so that `pip install tb-gpu-advisor[fast]` still works
        "s3": ["boto3>=1.26"],
        "gcs": ["gcsfs>=2023.1"],
        "capture": ["tensorflow>=2.15"],
        # ``tb-gpu-advisor mcp LOGDIR``: the reports as tools for AI assistants (official MCP Python SDK, 2.x API)
        "mcp": ["mcp>=2.3,<3"],
    },
    entry_points={
        "tensorboard_plugins": ["gpu_advisor = tb_gpu_advisor.serve.plugin_entry:GpuAdvisorLoader"],
        "console_scripts": ["tb-gpu-advisor = tb_gpu_advisor.cli.main:main"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Framework :: TensorFlow",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
