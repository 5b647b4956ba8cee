"""tb-gpu-advisor: TensorFlow GPU performance guide checks as a TensorBoard tab and a CLI.

Pipeline (one module per stage)::

    discovery -> reader (columnar timeline) -> steps -> metrics -> rules -> report
              -> plugin (serve JSON) / cli (text, json, markdown)

Importing this package is cheap and never imports TensorFlow.
"""

__version__ = "0.1.0"
