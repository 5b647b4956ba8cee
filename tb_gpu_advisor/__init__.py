"""tb-gpu-advisor: TensorFlow GPU performance guide checks as a TensorBoard tab and a CLI.

Pipeline (one module per stage)::

    discovery -> reader (columnar timeline) -> steps -> metrics -> rules -> report
              -> plugin (serve JSON) / cli (text, json, markdown)

Importing this package is cheap and never imports TensorFlow.
"""

__version__ = "0.1.0"

#: Part of every cache key: bump it whenever a change alters report contents
#: (a metric definition, a rule, a threshold, a fix's text), so no cache serves
#: stale reports.  Here, not in ``analyze``, so computing a cache key imports
#: nothing heavy (the plugin does it on a request thread).
ANALYZER_VERSION = f"{__version__}+a7"
