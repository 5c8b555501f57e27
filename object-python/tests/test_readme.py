"""The README's Python examples (every ```python block of "Using it from Python") run
as written.

A block may register types and methods, which live for the process: each block runs
once when this module is imported, before any leak check starts, and again in the test,
where registering the same types again is the same types and the methods are replaced
(so the second run must leave the live-object count where it found it)."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _blocks():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using it from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def _run(code):
    exec(compile(code, str(README), "exec"), {})


BLOCKS = _blocks()
_FIRST_RUN = {}
for _i, _code in enumerate(BLOCKS):
    try:
        _run(_code)
        _FIRST_RUN[_i] = None
    except Exception as e:  # reported by the test
        _FIRST_RUN[_i] = e


def test_the_section_has_its_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example(index, tmp_path, monkeypatch):
    assert _FIRST_RUN[index] is None, _FIRST_RUN[index]
    monkeypatch.chdir(tmp_path)
    _run(BLOCKS[index])
