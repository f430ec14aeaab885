"""The estimator state of model files (hlm.persistence._state): types kept exactly, nothing else loaded."""

import numpy as np
import pytest

from hlm.persistence import StateError, from_state, to_state


class _Holder:  # a class of the tests, not of hlm or scikit-learn
    pass


def test_values_round_trip_with_their_types():
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.arange(12.0).reshape(4, 3))
    scaler.extra_ = {"t": (1, 2.5, "x"), 3: {4, 5}, "nan": float("nan"), "inf": -np.inf, "i": np.int32(7),
                     "names": np.array(["a", "bb"]), "objects": np.array(["a", None, 2], dtype=object),
                     "record": np.zeros(2, dtype=[("a", "<i8"), ("b", "<f8")]), "dtype": np.dtype("float32"),
                     "empty": np.zeros((0, 3))}
    tree, arrays = to_state(scaler)
    assert all(a.dtype != object for a in arrays.values())
    again = from_state(tree, arrays)
    extra = again.extra_
    assert type(again) is StandardScaler and extra["t"] == (1, 2.5, "x") and extra[3] == {4, 5}
    assert np.isnan(extra["nan"]) and extra["inf"] == -np.inf
    assert type(extra["i"]) is np.int32 and extra["i"] == 7 and extra["dtype"] == np.float32
    assert type(again.n_samples_seen_) is type(scaler.n_samples_seen_)  # numpy scalars keep their type
    np.testing.assert_array_equal(extra["names"], ["a", "bb"])
    assert extra["objects"].dtype == object and extra["objects"].tolist() == ["a", None, 2]
    assert extra["record"].dtype == scaler.extra_["record"].dtype and extra["empty"].shape == (0, 3)
    np.testing.assert_array_equal(again.transform([[1.0, 2.0, 3.0]]), scaler.transform([[1.0, 2.0, 3.0]]))


@pytest.mark.parametrize("value, named", [(lambda x: x, "lam"), (_Holder(), "holder"), (open, "opener")])
def test_what_cannot_be_saved_is_named(value, named):
    from hlm.neighbors import KNNClassifier

    knn = KNNClassifier()
    setattr(knn, named, value)
    with pytest.raises(StateError, match=f"cannot save {named}"):
        to_state(knn)


@pytest.mark.parametrize("name", ["os:system", "builtins:eval", "subprocess:Popen", "hlm.neighbors:nothing",
                                  "hlmx.evil:Class",
                                  # another package's object reached through a module's imports
                                  "hlm.persistence._model:os.system", "hlm.persistence._model:shutil.rmtree",
                                  "hlm.persistence._model:tempfile._TemporaryFileCloser",
                                  # scikit-learn, but not an estimator or a compiled helper of one
                                  "sklearn.utils._bunch:Bunch", "sklearn.utils:shuffle"])
def test_loading_names_only_classes_of_hlm_and_scikit_learn(name):
    for tree in ({"@": "object", "class": name, "state": {}}, {"@": "function", "name": name},
                 {"@": "type", "name": name}):
        with pytest.raises(StateError):
            from_state(tree, {})


def test_a_damaged_state_is_a_state_error():
    with pytest.raises(StateError, match="the arrays lack 'x'"):
        from_state({"@": "array", "key": "x"}, {})
    with pytest.raises(StateError, match="unknown node type"):
        from_state({"@": "pickle", "data": ""}, {})
