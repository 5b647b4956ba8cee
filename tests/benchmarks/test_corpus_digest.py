"""``benchmarks/corpus.py``'s cache key: the generated XPlane captures (gigabytes, tens of minutes to write) are kept
until a generator module they are built from changes -- and only then."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REPO


@pytest.fixture(scope="module")
def corpus(bench_import):
    return bench_import("corpus")


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)


def test_modules_follow_every_spelling_of_an_import_and_nothing_else(corpus, tmp_path: Path) -> None:
    write(tmp_path, {"__init__": "", "root": "from synthetic.a import x\nimport synthetic.b\nfrom . import c\n",
                     "a": "from .d import y\n", "b": "from synthetic import e\n", "c": "", "d": "", "e": "",
                     "unrelated": "from synthetic.a import x\n"})
    assert corpus.generator_modules(str(tmp_path), ("root",)) == ["__init__", "a", "b", "c", "d", "e", "root"]


def test_the_real_corpus_depends_on_its_capture_builder_not_on_the_pytorch_generator(corpus) -> None:
    mods = corpus.generator_modules(str(REPO / "synthetic"))
    assert {"tfcapture", "builder", "kernels", "scenarios"} <= set(mods)
    assert "torchtrace" not in mods and "nsysexport" not in mods
