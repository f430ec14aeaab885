"""Incremental HLM (paper section 4, protocol 5.5): Scheme I, Scheme II, Retrain."""

import weakref

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from hlm.errors import DataError
from hlm.local_mapping._gamma import ComponentStats, fit_gamma
from hlm.local_mapping.incremental import (
    MatrixDistances,
    Retrain,
    SchemeI,
    SchemeII,
    component_schedule,
    sample_weight,
)


def stream(n_per_class=150, seed=0, n_classes=2, dim=4, spread=3.0):
    """A stationary Gaussian-mixture stream: 2 components per class, ids g0..; shuffled."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for k in range(n_classes):
        centres = rng.normal(scale=spread, size=(2, dim))
        pick = rng.integers(0, 2, n_per_class)
        X.append(centres[pick] + rng.normal(size=(n_per_class, dim)))
        y += [f"c{k}"] * n_per_class
    X, y = np.vstack(X), np.array(y)
    order = rng.permutation(len(y))
    ids = np.array([f"g{i}" for i in range(len(y))])
    return ids[order], y[order], MatrixDistances(cdist(X, X), ids), X, ids


def batches(n, n_batches=8, initial=0.2):
    """Section 5.5: 20% initial batch, the rest in 8 equal batches."""
    first = int(round(initial * n))
    return [np.arange(first)] + list(np.array_split(np.arange(first, n), n_batches))


class Recording:
    """A distances callable that records which ids it was asked about."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __call__(self, rows, cols):
        self.calls.append((set(rows), set(cols)))
        return self.inner(rows, cols)


# ---------------------------------------------------------------- Scheme I
def test_scheme_i_geometric_mean_update_equals_batch_value():
    ids, y, dist, _, _ = stream(seed=1)
    train = ids[:240]
    learner = SchemeI(n_init=3)
    all_log_u = []
    for b in batches(len(train)):
        learner.partial_fit(train[b], y[b], dist)
        # the batch value: the geometric mean of every u of every used cluster so far
        all_log_u.append(_used_log_u(learner, train[b], y[b], dist))
        expected = np.concatenate(all_log_u)
        assert learner.n_u_total_ == expected.size
        assert learner.log_geo_mean_u_ == pytest.approx(expected.mean(), rel=1e-12)


def _used_log_u(learner, batch_ids, batch_y, dist):
    """log u of the batch's used clusters, recomputed from the batch and the components just added."""
    n_new = sum(1 for _ in learner.prototype_ids_) - _used_log_u.previous.get(learner, 0)
    _used_log_u.previous[learner] = len(learner.prototype_ids_)
    protos = learner.prototype_ids_[-n_new:]
    classes = learner.component_class_[-n_new:]
    y_idx = np.array([learner.classes_.index(c) for c in batch_y])
    out = []
    for k in np.unique(y_idx):
        members = batch_ids[y_idx == k]
        P = protos[classes == k]
        D = dist(members, P)
        near = np.argmin(np.where(members[:, None] == P[None, :], -1.0, D), axis=1)
        for j, p in enumerate(P):
            mem = members[(near == j) & (members != p)]
            if mem.size + 1 >= learner.min_cluster_size:
                u = dist(mem, [p])[:, 0] ** 2
                out.append(np.log(u[u > 0]))
    return np.concatenate(out) if out else np.empty(0)


# prototypes each learner had at the previous call; weak keys, as an id() could be reused by a later
# test's learner once this one is collected (which made the count stale and the test flaky)
_used_log_u.previous = weakref.WeakKeyDictionary()


def test_scheme_i_keeps_only_sufficient_statistics():
    ids, y, dist, _, _ = stream(seed=2)
    recording = Recording(dist)
    learner = SchemeI(n_init=3)
    seen = set()
    for b in batches(240):
        recording.calls.clear()
        learner.partial_fit(ids[b], y[b], recording)
        # fitting asks only for distances within the new batch: never the past
        assert all(rows <= set(ids[b]) and cols <= set(ids[b]) for rows, cols in recording.calls)
        seen |= set(ids[b])
    n_comp = len(learner.prototype_ids_)
    for name, value in vars(learner).items():
        if isinstance(value, np.ndarray):  # per-component arrays only, never per seen object
            assert value.shape[0] in (n_comp, 0) or value.ndim == 0, name
            if value.dtype.kind in "US":
                assert set(value) <= set(learner.prototype_ids_), name
        assert not callable(value), name  # the distances callable is not kept
    assert n_comp == 2 * component_schedule(9, "scheme_i") < len(seen) / 3
    assert learner.n_u_total_ > n_comp  # the statistics do summarise the past


def test_scheme_i_single_round_equals_eq3_on_its_clusters():
    ids, y, dist, _, _ = stream(seed=3)
    learner = SchemeI(n_init=5).partial_fit(ids[:120], y[:120], dist)
    # eq. 3 from raw u of the same clusters
    stats = learner.stats()
    log_u = _used_log_u(learner, ids[:120], y[:120], dist)
    raw = ComponentStats(stats.weight, stats.sum_u, np.r_[log_u.sum(), np.zeros(len(stats.weight) - 1)])
    assert fit_gamma(stats).shape_mle == pytest.approx(fit_gamma(raw).shape_mle, rel=1e-12)


# ---------------------------------------------------------------- Scheme II
def test_scheme_ii_weights_and_sample_sizes():
    assert sample_weight(4, 4) == 1.0 and sample_weight(2, 4) == 1.0 and sample_weight(5, 4) > 1.0
    assert sample_weight(9, 4) == pytest.approx(np.sqrt(10 / 5))
    ids, y, dist, _, _ = stream(seed=4)
    learner = SchemeII(n_init=3)
    parts = batches(240)
    learner.partial_fit(ids[parts[0]], y[parts[0]], dist)
    rng = np.random.default_rng(0)
    for c in range(len(learner.prototype_ids_)):
        size = int((learner.assignment_ == c).sum()) - 1  # |I_j|: besides the prototype
        pos, w = learner.draw_sample(rng, c)
        if size > learner.v:
            assert pos.size == learner.v + 1  # v points plus the prototype
            assert learner.seen_ids_[pos[0]] == learner.prototype_ids_[c]
            np.testing.assert_allclose(w, np.sqrt((size + 1) / (learner.v + 1)))
        else:
            assert pos.size == size + 1 and (w == 1).all()
        assert (learner.assignment_[pos] == c).all() and len(set(pos)) == pos.size
    expected = sum(min(int((learner.assignment_ == c).sum()), learner.v + 1)  # v + prototype, or all
                   for c in range(len(learner.prototype_ids_)))
    learner.partial_fit(ids[parts[1]], y[parts[1]], dist)
    pos, w = learner.last_sample_["positions"], learner.last_sample_["weights"]
    new = pos >= len(parts[0])  # positions of the new batch in seen_ids_
    assert new.sum() == len(parts[1]) and (w[new] == 1).all()  # every new point, weight 1
    assert (~new).sum() == expected  # v + 1 (or all) per past cluster
    assert (w[~new] > 1).any()


# ---------------------------------------------------------------- component counts (section 5.5)
@pytest.mark.parametrize("scheme", ["scheme_i", "scheme_ii", "retrain"])
def test_component_counts_follow_the_schedule(scheme):
    ids, y, dist, _, _ = stream(n_per_class=200, seed=5)
    learner = {"scheme_i": SchemeI, "scheme_ii": SchemeII, "retrain": Retrain}[scheme](n_init=2)
    for r, b in enumerate(batches(320), start=1):
        learner.partial_fit(ids[b], y[b], dist)
        expected = component_schedule(r, scheme)
        np.testing.assert_array_equal(learner.n_components_, [expected, expected])
    assert component_schedule(9, "scheme_i") == 36 and component_schedule(9, "scheme_ii") == 20


# ---------------------------------------------------------------- the three agree on a stationary stream
def test_stationary_stream_all_three_close_by_the_last_round():
    ids, y, dist, _, _ = stream(n_per_class=250, seed=6, spread=1.0)  # overlapping classes
    test, train = np.arange(100), np.arange(100, 500)
    errors = {}
    for name, cls in {"scheme_i": SchemeI, "scheme_ii": SchemeII, "retrain": Retrain}.items():
        learner = cls(n_init=5)
        for b in batches(len(train)):
            learner.partial_fit(ids[train][b], y[train][b], dist)
        errors[name] = 100 * np.mean(learner.predict(ids[test], dist) != y[test])
    assert 2 < min(errors.values()) and max(errors.values()) < 30, errors  # a real, not a trivial, task
    assert max(errors.values()) - min(errors.values()) <= 5, errors


# ---------------------------------------------------------------- bad input and faults
@pytest.mark.parametrize("cls", [SchemeI, SchemeII, Retrain])
def test_new_class_creates_its_components(cls):
    ids, y, dist, _, _ = stream(n_per_class=60, n_classes=3, seed=7)
    first = np.flatnonzero(y != "c2")[:60]
    later = np.flatnonzero(y == "c2")[:30]
    learner = cls(n_init=2).partial_fit(ids[first], y[first], dist)
    assert "c2" not in learner.classes_
    learner.partial_fit(ids[later], y[later], dist)
    assert learner.classes_[-1] == "c2" and learner.n_components_[-1] >= 1
    assert set(learner.predict(ids[later], dist)) <= {"c0", "c1", "c2"}


@pytest.mark.parametrize("cls", [SchemeI, SchemeII, Retrain])
def test_empty_batch_is_a_no_op_with_a_warning(cls):
    ids, y, dist, _, _ = stream(n_per_class=40, seed=8)
    learner = cls(n_init=2).partial_fit(ids[:40], y[:40], dist)
    before = learner.model()
    with pytest.warns(UserWarning, match="empty batch"):
        learner.partial_fit([], [], dist)
    assert learner.model() == before and learner.n_rounds_ == 1


@pytest.mark.parametrize("cls", [SchemeI, SchemeII, Retrain])
def test_missing_distances_give_a_clear_error(cls):
    _, y, _, X, ids = stream(n_per_class=40, seed=9)
    known = MatrixDistances(cdist(X[:60], X[:60]), ids[:60])  # knows nothing about ids[60:]
    learner = cls(n_init=2).partial_fit(ids[:40], y[:40], known)
    with pytest.raises(DataError, match=r"partial_fit: .*no distances for object\(s\) g6"):
        learner.partial_fit(ids[60:70], y[60:70], known)


# ---------------------------------------------------------------- protocol, table, MLflow (section 5.5)
def _toy_artifact(n_per_class=60, seed=10):
    from hlm.datasets._artifacts import DistanceArtifact

    _, _, _, X, ids = stream(n_per_class=n_per_class, seed=seed)  # X, ids unshuffled: class c0 first
    return DistanceArtifact(ids, np.array(["c0"] * n_per_class + ["c1"] * n_per_class), cdist(X, X), {})


def test_batch_indices_follow_the_protocol():
    from hlm.pipeline.incremental.run import batch_indices

    train = np.arange(100, 200)
    parts = batch_indices(train, seed=3)
    assert [len(p) for p in parts] == [20] + [10] * 8
    assert sorted(np.concatenate(parts)) == list(train)
    assert all((a == b).all() for a, b in zip(parts, batch_indices(train, seed=3)))
    assert not (parts[0] == batch_indices(train, seed=4)[0]).all()


def test_run_incremental_rows_and_table():
    from hlm.pipeline.evaluation.splits import make_splits
    from hlm.pipeline.incremental.report import incremental_time_table
    from hlm.pipeline.incremental.run import run_incremental

    art = _toy_artifact()
    splits = make_splits(art.n, dataset="toy", n_splits=2, test_fraction=0.2, seed=0)
    frames = {}
    for scheme in ("scheme_i", "scheme_ii", "retrain"):
        frame = run_incremental(art, splits, scheme, dataset="toy", seed=1, params={"n_init": 2})
        assert len(frame) == 2 * 9 and list(frame["round"][:9]) == list(range(1, 10))
        assert (frame[frame["round"] == 9].n_seen == 96).all()
        assert (frame.round_seconds > 0).all() and frame.error_rate.between(0, 100).all()
        expected = np.array([2 * component_schedule(r, scheme) for r in range(1, 10)])
        if scheme == "scheme_i":  # a class with fewer than 4 objects in a ~10-object batch gets fewer
            assert (frame.n_components[:9] <= expected).all() and (frame.n_components[:9] >= expected - 8).all()
        else:
            assert list(frame.n_components[:9]) == list(expected)
        frames[(scheme, "toy")] = frame
    again = run_incremental(art, splits, "scheme_ii", dataset="toy", seed=1, params={"n_init": 2})
    np.testing.assert_array_equal(again.error_rate, frames[("scheme_ii", "toy")].error_rate)  # seeded
    table = incremental_time_table(frames, ["toy"], ["scheme_i", "retrain"], {("retrain", "toy"): 2.0})
    row = table.set_index("scheme").loc["retrain"]
    assert row.total_seconds == pytest.approx(frames[("retrain", "toy")].groupby("split").round_seconds.sum().mean())
    assert row.paper_total_seconds == 2.0 and row.n_splits == 2


def test_log_incremental_draws_the_learning_curve(tmp_path, monkeypatch):
    import pandas as pd
    from mlflow.tracking import MlflowClient

    from hlm.datasets._artifacts import write_frame
    from hlm.pipeline import tracking

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    monkeypatch.setenv("HLM_MLFLOW_ARTIFACTS", str(tmp_path / "mlruns"))
    frame = pd.DataFrame({"split": np.repeat([0, 1], 9), "round": np.tile(np.arange(1, 10), 2),
                          "n_seen": np.tile(np.arange(1, 10) * 10, 2), "error_rate": np.linspace(20, 5, 18),
                          "round_seconds": 0.1, "n_components": 8})
    path = tmp_path / "results/incremental/ds/scheme_i.parquet"
    write_frame(frame, path, {})
    first = tracking.log_incremental(dataset="ds", scheme="scheme_i", path=path, tags={}, params={"seed": 1})
    same = tracking.log_incremental(dataset="ds", scheme="scheme_i", path=path, tags={}, params={"seed": 1})
    assert same == first  # the same file is not logged again
    frame["round_seconds"] = 0.1 + 1e-9 * np.arange(18)  # a rerun: new timings
    write_frame(frame, path, {})
    second = tracking.log_incremental(dataset="ds", scheme="scheme_i", path=path, tags={}, params={"seed": 1})
    assert tracking.pair_runs("ds/scheme_i") == [second]  # a rerun replaces, not duplicates
    client = MlflowClient()
    history = client.get_metric_history(second, "error_rate_mean")
    expected = frame.groupby("round").error_rate.mean()
    history = sorted(history, key=lambda m: m.step)
    assert [m.step for m in history] == list(expected.index)
    np.testing.assert_allclose([m.value for m in history], expected.values)
    assert client.get_run(second).data.metrics["total_seconds_mean"] == pytest.approx(0.9)
    assert first != second


def test_scheme_ii_eq4_estimates_from_the_weighted_sample_only():
    """estimate="eq4": eq. 4 on the weighted sample + new batch (section 4.2, the cheaper option)."""
    from hlm.local_mapping._mixture_hlm import estimate_scales

    ids, y, dist, _, _ = stream(seed=11)
    parts = batches(240)
    learner = SchemeII(n_init=3, estimate="eq4")
    for b in parts[:3]:
        learner.partial_fit(ids[b], y[b], dist)
    pos, w = learner.last_sample_["positions"], learner.last_sample_["weights"]
    assert (w > 1).any() and pos.size < learner.seen_ids_.size  # a real subsample, weighted
    comp = learner.assignment_[pos]
    protos = learner.prototype_ids_[comp]
    u = np.array([dist([a], [p])[0, 0] ** 2 for a, p in zip(learner.seen_ids_[pos], protos)])
    size = np.bincount(learner.assignment_, minlength=len(learner.prototype_ids_))
    keep = (u > 0) & (size[comp] >= learner.min_cluster_size)
    stats = ComponentStats.from_samples(u[keep], comp[keep], len(learner.prototype_ids_), w[keep])
    scale, shapes, _ = estimate_scales(stats, learner.component_class_, len(learner.classes_))
    np.testing.assert_allclose(learner.model().scale, scale, rtol=1e-12)
    assert learner.model().shape == shapes[0]
    eq3 = SchemeII(n_init=3)
    for b in parts[:3]:
        eq3.partial_fit(ids[b], y[b], dist)
    assert not np.allclose(eq3.model().scale, scale)  # eq. 3 on all data differs


def test_learner_settings_are_the_values_the_learner_uses():
    """What the incremental stage records (and MLflow shows): the config's settings of the scheme,
    the learner's own defaults for those the config leaves out."""
    from hlm.pipeline.incremental.run import learner_settings

    own = SchemeII()
    assert learner_settings("scheme_ii", {"v": 2}) == {"n_init": own.n_init, "step": own.step, "v": 2,
                                                       "estimate": own.estimate}
    assert learner_settings("scheme_i") == {"n_init": own.n_init}
    assert learner_settings("retrain", {"n_init": 3}) == {"n_init": 3, "step": Retrain().step}


def test_incremental_claims_from_known_curves():
    """The paper's claims (section 5.5) computed on hand-made curves: two splits, three rounds."""
    import pandas as pd

    from hlm.pipeline.incremental.claims import claims_markdown, claims_table

    def frame(errors, seconds):  # errors per round (the two splits the same), seconds per round
        return pd.DataFrame({"split": np.repeat([0, 1], 3), "round": np.tile([1, 2, 3], 2),
                             "error_rate": np.tile(errors, 2), "round_seconds": np.tile(seconds, 2)})

    runs = {("scheme_i", "voting"): frame([10.0, 8.0, 7.0], [0.01, 0.01, 0.02]),
            ("scheme_ii", "voting"): frame([12.0, 9.0, 8.0], [0.1, 0.1, 0.1]),
            ("retrain", "voting"): frame([11.0, 10.0, 8.5], [0.5, 0.5, 1.0])}
    table = claims_table(runs, ["voting", "absent"]).set_index("claim")
    assert len(table) == 7 and set(table.dataset) == {"voting"}
    row = lambda n: table.loc[[c for c in table.index if c.startswith(f"{n}.")][0]]  # noqa: E731
    assert row(1).agrees and row(1).ours == "I 0.040 s, II 0.300 s, Retrain 2.000 s"
    assert row(2).ours == "I / Retrain 0.020, II / Retrain 0.150"
    assert row(3).ours == "II − Retrain -0.50 points" and row(3).agrees
    assert row(4).ours == "Scheme I lowest in 3 of 3 rounds" and row(4).agrees
    assert row(5).ours == "II below Retrain in 2 of 3 rounds" and row(5).agrees
    assert row(6).agrees
    # the last round against the first: I -3, II -4, Retrain -2.5, all more than 2 points better
    assert row(7).ours == "I -3.00, II -4.00, Retrain -2.50 points" and not row(7).agrees
    assert "6 of 7 agree." in claims_markdown(claims_table(runs, ["voting"]))
    assert "No data set of the run has all three" in claims_markdown(claims_table(runs, ["absent"]))
    # a tie is no win: Scheme II equal to Scheme I in the first round
    runs[("scheme_ii", "voting")] = frame([10.0, 9.0, 8.0], [0.1, 0.1, 0.1])
    tied = claims_table(runs, ["voting"]).set_index("claim")
    four = tied.loc[[c for c in tied.index if c.startswith("4.")][0]]
    assert four.ours == "Scheme I lowest in 2 of 3 rounds" and not four.agrees
