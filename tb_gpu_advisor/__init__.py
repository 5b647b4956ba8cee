"""tb-gpu-advisor: TensorFlow GPU performance guide checks as a TensorBoard tab and a CLI.

The package is a pipeline, one folder per stage, read top to bottom; each stage
imports only the stages before it (``STAGES``; ``tests/test_architecture.py``)::

    common -> model -> devices -> frameworks -> formats -> discover
           -> job -> steps -> metrics -> rules -> report -> runtime -> serve / cli

Importing this package is cheap and never imports TensorFlow.
"""

__version__ = "0.1.0"

#: Part of every cache key: bump it whenever a change alters report contents
#: (a metric definition, a rule, a threshold, a fix's text), so no cache serves
#: stale reports.  Here, not in ``report``, so computing a cache key imports
#: nothing heavy (the plugin does it on a request thread).
ANALYZER_VERSION = f"{__version__}+a92"

#: The stages in pipeline order: one sub-package each.  A stage may import itself and the stages
#: before it, never one after it; the architecture test reads this tuple, and README's tree lists it.
STAGES = (
    "common",      # file access, number formatting, heap release, the thresholds table
    "model",       # the neutral trace model, its column helpers, logdir and report types
    "devices",     # GPU vendors: kernel-library taxonomy, generations, what they accelerate
    "frameworks",  # TensorFlow, JAX, PyTorch: op and event names, step markers, wording, fixes
    "formats",     # XPlane, Kineto: file layout, probe, reader that fills the model
    "discover",    # logdir -> runs / sessions / host files, asking the formats
    "job",         # trace -> what the capture is: training, inference or serving; cold or steady; its own steps
    "steps",       # trace -> steps
    "metrics",     # trace + steps -> numbers per step, GPU and host
    "rules",       # metrics -> findings, one module per guide check
    "report",      # metrics + findings -> the versioned report; merge, render, diff
    "runtime",     # the one analysis entry point: the chain, worker processes, cache
    "serve",       # the TensorBoard plugin and the tab; the MCP server for AI assistants
    "cli",         # the tb-gpu-advisor command
)
