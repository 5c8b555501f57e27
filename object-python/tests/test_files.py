import numpy as np

import object_python as op


def test_save_and_load(tmp_path, tour):
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=x)
    path = tmp_path / "graph.json"
    op.save(e, path)
    text = path.read_text()
    assert '"tour.Add"' in text and '"root_index"' in text
    back = op.load(path)
    assert repr(back) == repr(e) and back.lhs == back.rhs


def test_values_and_tensors_in_files(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = {"weights": op.from_dlpack(a), "name": "layer", "sizes": [2, 3]}
    path = tmp_path / "values.json"
    op.save(value, path)
    back = op.load(path)
    assert back["name"] == "layer" and list(back["sizes"]) == [2, 3]
    np.testing.assert_array_equal(np.from_dlpack(back["weights"]), a)


def test_load_errors(tmp_path):
    import pytest

    with pytest.raises(Exception) as e:
        op.load_json_graph("{")
    assert e.value.kind
