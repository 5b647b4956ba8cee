"""A capture whose writer its events do not name gets each writer's own fix headed by whose it is, the fix's words as
its framework module says them (h37-review62; fails on 2aa60c44).

Why: ``frameworks._either_writer`` (h37-window62) lower-cased the first letter of every TensorFlow and JAX window fix
to follow its "If <writer> wrote the capture: " head -- string surgery on another module's words, which turns a fix
opening with a name ("JAX's ...", "XLA ...", "Keras ...") into "jAX's", "xLA", "keras".  A rule asks for words, and
so does the table that puts two writers' words side by side: each is kept as written.
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import jax, tensorflow


def test_each_writers_fix_is_kept_as_its_module_says_it() -> None:
    """Every fix key of either writer (h37-words63: not the window fixes alone): a fix both give alike once, unheaded,
    then each writer's other fixes headed, in the words its module gives them."""
    writers = (tensorflow.FRAMEWORK, jax.FRAMEWORK)
    for key in ("capture_quality:no_gpu", "capture_quality:window", "capture_quality:not_kept"):
        assert all(fw.fixes.get(key) for fw in writers), key  # the window fixes: each writer has its own
    for key in dict.fromkeys(k for fw in writers for k in fw.fixes):
        own = [(fw, frameworks._own_fix(fw, key)) for fw in writers]
        alike = [a.text for a in own[0][1] if a in own[1][1]]
        want = alike + [f"If {fw.name} wrote the capture: {a.text}" for fw, theirs in own for a in theirs
                        if a.text not in alike]
        assert [a.text for a in frameworks.UNKNOWN.fixes[key]] == want, key


def test_a_fix_opening_with_a_name_keeps_it() -> None:
    """By construction: a writer whose fix opens with "XLA" keeps "XLA" after the head."""
    fw = dataclasses.replace(jax.FRAMEWORK, fixes={"capture_quality:window": tuple(
        dataclasses.replace(a, text="XLA " + a.text) for a in jax.FRAMEWORK.fixes["capture_quality:window"])})
    fixes, _ = frameworks._either_writer((tensorflow.FRAMEWORK, fw))
    mine = [a for a in fixes["capture_quality:window"] if a.text.startswith("If JAX")]
    assert mine and all(a.text.startswith("If JAX wrote the capture: XLA ") for a in mine), fixes
