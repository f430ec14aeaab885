"""Saved models (hlm.persistence; hlm fit / hlm predict): known answers from the pipeline's own evaluation.

* Equality: a model fitted on split 0's training part (``fit_model(train=..., split=0)``), saved and loaded,
  predicts split 0's test part as ``evaluate_method`` does: labels identical, probabilities within 1e-12.
  Its input is only the relation to its reference objects (the other columns are never given), so this also
  shows that Mixture HLM reads only its prototypes and P-SVM only its support features.
* Raw objects: new vectors, series and sequences given raw predict as their relation from the data set's
  matrix does.
* The grids are cut to their first two values per parameter (the same config for both sides): the fits
  are the pipeline's, on 45 objects, in a fraction of the time.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hlm.persistence import load_model, save_model
from hlm.pipeline.config import config_defaults
from hlm.pipeline.evaluation.evaluate import evaluate_method
from hlm.pipeline.evaluation.splits import make_splits, split_indices
from hlm.pipeline.fit import dataset_objects, fit_model
from hlm.pipeline.methods import METHODS

DATA = Path(__file__).parents[1] / "data"
REGISTRY = """
points:
  path: points.csv
  format: csv
  kind: vectors
  label_column: label
  distance: euclidean
  standardize: true
tiny_series:
  path: series.csv
  format: csv
  kind: series
  distance: dtw
  window: 0.2
tiny_sequences:
  path: sequences.fa
  format: fasta
  kind: sequences
  distance: alignment
sims:
  path: sims.csv
  format: csv
  kind: similarity
  labels_path: sims_labels.csv
  to_distance: bound_minus
  upper_bound: 1.0
votes:
  path: votes.csv
  format: csv
  kind: categorical
  label_column: party
  distance: vdm
  na_value: abstain
"""


def _short(grid):
    if isinstance(grid, list):
        return [_short(g) for g in grid[:2]]
    return {k: list(v)[:2] for k, v in grid.items()}


def _config(root: Path) -> dict:
    config = config_defaults()
    config["registry"] = "registry.yaml"
    config["cv_folds"] = 3
    config["method_params"] = {m: {"grid": _short(s.default_grid)} for m, s in METHODS.items() if s.default_grid}
    return config


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A folder with a registry of four small data sets: vectors in 3 classes and 3 features (z-scored), the
    tests' series and sequences, and a similarity matrix of 30 objects."""
    root = tmp_path_factory.mktemp("project")
    (root / "registry.yaml").write_text(REGISTRY)
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(m, [1.0, 2.0, 0.5], size=(15, 3)) for m in (0.0, 1.5, 3.0)]) * [1, 10, 100]
    labels = np.repeat(["r", "s", "t"], 15)
    pd.DataFrame({"id": [f"p{i}" for i in range(45)], "f1": X[:, 0], "f2": X[:, 1], "f3": X[:, 2],
                  "label": labels}).to_csv(root / "points.csv", index=False)
    shutil.copy(DATA / "series.csv", root / "series.csv")
    shutil.copy(DATA / "sequences.fa", root / "sequences.fa")
    Z = np.vstack([rng.normal(m, 1.0, size=(15, 2)) for m in (0.0, 2.5)])
    S = np.exp(-0.3 * np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1)))
    ids = [f"m{i}" for i in range(30)]
    pd.DataFrame(S, index=ids, columns=ids).to_csv(root / "sims.csv")
    pd.DataFrame({"id": ids, "label": np.repeat(["u", "v"], 15)}).to_csv(root / "sims_labels.csv", index=False)
    party = np.repeat(["d", "r"], 20)
    votes = {f"v{j}": np.where(rng.random(40) < np.where(party == "d", 0.8, 0.25), "y", "n").astype(object)
             for j in range(4)}
    votes["v0"][[3, 17, 25]] = None  # missing: the entry's na_value
    pd.DataFrame({"id": [f"r{i}" for i in range(40)], **votes, "party": party}).to_csv(root / "votes.csv",
                                                                                      index=False)
    return root


@pytest.fixture(scope="module")
def loaded(project):
    from hlm.datasets._registry import load_registry

    config = _config(project)
    registry = load_registry(project / "registry.yaml")
    return {name: dataset_objects(spec, project, config) for name, spec in registry.items()}


def _split0(artifact, name, config):
    splits = make_splits(artifact.n, dataset=name, n_splits=1, test_fraction=0.2, seed=config["seed"])
    return splits, *split_indices(splits, 0)


def _evaluation(artifact, splits, name, method, config):
    mp = config["method_params"].get(method, {})
    return evaluate_method(artifact, splits, method, dataset=name, seed=config["seed"], n_folds=config["cv_folds"],
                           grid_config=mp.get("grid"), split_ids=[0])


def _relation_of(artifact, model, test, train):
    """The new objects' relation to the model's reference objects, from the data set's matrix (native)."""
    M = artifact.similarities if model.dataset["native_similarity"] else artifact.distances
    return M[np.ix_(test, train[model.reference_index])]


@pytest.mark.parametrize("method", [m for m, s in METHODS.items()])
def test_saved_model_predicts_split_0_as_the_evaluation(method, project, loaded, tmp_path):
    name = "points"
    config = _config(project)
    artifact = loaded[name][0]
    splits, train, test = _split0(artifact, name, config)
    expected = _evaluation(artifact, splits, name, method, config)
    fitted = fit_model(name, method, root=project, config=config, train=train, split=0, loaded=loaded[name])
    assert json.loads(expected.evaluation["params"][0]).items() >= fitted.params.items()
    model = load_model(save_model(fitted, tmp_path / "model"))
    preds = expected.predictions
    if model.takes_relation:
        R = _relation_of(artifact, model, test, train)
        assert R.shape[1] == len(model.reference_ids) <= len(train)
        got = model.predict(relation=R)
        raw = model.predict(artifact.vectors[test])  # the raw vectors: standardised by the saved mean and sd
        np.testing.assert_array_equal(raw, got)
    else:
        got = model.predict(artifact.vectors[test])
    np.testing.assert_array_equal(got.astype(str), preds["y_pred"].to_numpy(dtype=str))
    if METHODS[method].gives_probabilities:
        P = model.predict_proba(relation=R) if model.takes_relation else model.predict_proba(artifact.vectors[test])
        columns = [f"proba_{c}" for c in model.classes]
        np.testing.assert_allclose(P, preds[columns].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, method", [("tiny_series", "hlm_vsh"), ("tiny_series", "knn"),
                                          ("tiny_sequences", "hlm_vsh"), ("tiny_sequences", "local_sda")])
def test_raw_objects_predict_as_their_distances(name, method, project, loaded, tmp_path):
    config = _config(project)
    artifact, objects, _ = loaded[name]
    splits, train, test = _split0(artifact, name, config)
    model = load_model(save_model(fit_model(name, method, root=project, config=config, train=train, split=0,
                                            loaded=loaded[name]), tmp_path / "m"))
    R = _relation_of(artifact, model, test, train)
    np.testing.assert_allclose(model.relation([objects[i] for i in test]), R, rtol=1e-12, atol=0)
    model.n_computed = 0
    np.testing.assert_array_equal(model.predict([objects[i] for i in test]), model.predict(relation=R))
    assert model.n_computed == len(test) * len(model.reference_ids) * (2 if model.dataset["symmetrized"] else 1)
    expected = _evaluation(artifact, splits, name, method, config).predictions["y_pred"].to_numpy(dtype=str)
    np.testing.assert_array_equal(model.predict(relation=R).astype(str), expected)


def test_mixture_hlm_of_a_matrix_stores_only_its_prototypes(project, loaded, tmp_path):
    """Size: no array of the saved model has an entry per training object; the reference objects are the
    prototypes."""
    model = fit_model("sims", "hlm_vsh", root=project, config=_config(project), loaded=loaded["sims"])
    path = save_model(model, tmp_path / "m")
    P = len(model.estimator.prototypes_)
    assert len(model.reference_ids) == P < model.n_train == 30
    with np.load(path / "arrays.npz", allow_pickle=False) as npz:
        assert max(npz[k].size for k in npz.files) <= P
    assert model.reference_objects is None  # a matrix data set: new objects come as their similarities


def test_cli_fit_and_predict_from_distances(project, loaded, tmp_path, capsys):
    """hlm fit on a similarity matrix, then hlm predict --distances with the similarities to the reference
    objects, columns in another order: the labels of Mixture HLM's eq. 6 computed here from the prototypes'
    rows of d = 1 - s, and the nearest prototype."""
    from hlm.cli import main

    out = tmp_path / "model"
    assert main(["fit", "sims", "--method", "hlm_vsh", "-o", str(out), "--root", str(project),
                 "--registry", "registry.yaml"]) == 0
    reference = capsys.readouterr().out
    assert main(["predict", str(out), "--reference"]) == 0
    ids = capsys.readouterr().out.split()
    model = load_model(out)
    mix = model.estimator
    assert ids == model.reference_ids and len(ids) == len(mix.prototypes_) < 30
    S = pd.read_csv(project / "sims.csv", index_col=0)
    rows = ["m0", "m3", "m20", "m29"]
    table = S.loc[rows, ids[::-1]].reset_index(names="id")  # columns in any order
    table["label"] = ["u", "u", "v", "x"]
    table.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(out), str(tmp_path / "new.csv"), "--distances", "-o", str(tmp_path / "p.csv")]) == 0
    printed = capsys.readouterr().out
    got = pd.read_csv(tmp_path / "p.csv", keep_default_na=False)
    protos = [ids[list(model.reference_index).index(j)] for j in mix.prototypes_]  # prototypes_ order
    D = 1.0 - S.loc[rows, protos].to_numpy()  # bound_minus with the entry's upper bound 1
    # eq. 6 by hand: log pi_k + log sum_j omega_j Gamma(d_j; s, b_j) over class k's components
    from scipy.special import logsumexp
    from scipy.stats import gamma

    shape = np.broadcast_to(mix.shape_, (len(mix.classes_),))[mix.component_class_]
    logpdf = gamma.logpdf(D, a=shape, scale=mix.scales_) + np.log(mix.weights_)
    scores = np.column_stack([np.log(mix.class_prior_[k]) + logsumexp(logpdf[:, mix.component_class_ == k], axis=1)
                              for k in range(len(mix.classes_))])
    assert list(got["predicted"]) == list(mix.classes_[scores.argmax(axis=1)].astype(str))
    assert list(got["nearest_prototype"]) == [protos[j] for j in D.argmin(axis=1)]
    assert list(got.columns[:3]) == ["id", "predicted", "label"]
    assert "warning: 1 labels are not among the model's classes (x)" in printed
    assert "error rate" in printed and "reference objects: " in reference


def test_categorical_records_predict_as_their_codes(project, loaded, tmp_path, capsys):
    """House Votes-like records (VDM): new records in the entry's format, a missing cell its na_value, read
    as the training codes; the model predicts them as the fitted estimator does from the artifact's codes."""
    from hlm.cli import main

    artifact = loaded["votes"][0]
    model = load_model(save_model(fit_model("votes", "knn", root=project, config=_config(project),
                                            loaded=loaded["votes"]), tmp_path / "m"))
    assert model.input == "records" and model.reference_ids == []
    assert main(["predict", str(tmp_path / "m"), str(project / "votes.csv"), "-o", str(tmp_path / "p.csv")]) == 0
    got = pd.read_csv(tmp_path / "p.csv")
    np.testing.assert_array_equal(got["predicted"].astype(str), model.estimator.predict(artifact.records).astype(str))
    assert "error rate" in capsys.readouterr().out
    bad = pd.read_csv(project / "votes.csv").assign(v1="maybe")
    bad.to_csv(tmp_path / "bad.csv", index=False)
    _refused(["predict", str(tmp_path / "m"), str(tmp_path / "bad.csv"), "-o", str(tmp_path / "q.csv")], capsys,
             "column 'v1' holds 'maybe', not one of the training values (n, y)")


@pytest.fixture
def models(project, loaded, tmp_path):
    config = _config(project)
    return {name: save_model(fit_model(name, "knn", root=project, config=config, loaded=loaded[name]),
                             tmp_path / name) for name in ("tiny_series", "tiny_sequences", "sims")}


def _refused(argv, capsys, *fragments):
    from hlm.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hlm: error: ") and "\n" not in err and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err


def test_bad_model_folders_are_refused_in_one_line(models, tmp_path, capsys):
    series = models["tiny_series"]
    new = tmp_path / "new.csv"
    shutil.copy(DATA / "series.csv", new)
    out = tmp_path / "p.csv"
    doc = json.loads((series / "model.json").read_text())
    other = tmp_path / "other"
    shutil.copytree(series, other)
    (other / "model.json").write_text(json.dumps({**doc, "format_version": 99}))
    _refused(["predict", str(other), str(new), "-o", str(out)], capsys, "format version 99")
    (other / "model.json").write_text("{ not json")
    _refused(["predict", str(other), str(new), "-o", str(out)], capsys, "damaged model file")
    (other / "model.json").write_text(json.dumps(doc))
    (other / "arrays.npz").write_bytes(b"PK\x03\x04 not a zip")
    _refused(["predict", str(other), str(new), "-o", str(out)], capsys, "arrays.npz")
    _refused(["predict", str(tmp_path), str(new), "-o", str(out)], capsys, "not a model folder")
    doc["reference"]["index"] = doc["reference"]["index"][:-1]  # ids and indices disagree
    (other / "model.json").write_text(json.dumps(doc))
    shutil.copy(series / "arrays.npz", other / "arrays.npz")
    _refused(["predict", str(other), str(new), "-o", str(out)], capsys, "damaged model")
    assert not out.exists()


def test_fit_never_replaces_what_is_not_a_model(project, tmp_path, capsys):
    from hlm.cli import main

    keep = tmp_path / "results"
    keep.mkdir()
    (keep / "precious.csv").write_text("1\n")
    argv = ["fit", "tiny_series", "--method", "knn", "--root", str(project), "--registry", "registry.yaml",
            "--params", '{"n_neighbors": 1}', "-o"]
    _refused([*argv, str(keep)], capsys, "exists and is not a model folder")
    assert (keep / "precious.csv").read_text() == "1\n"
    assert main([*argv, str(tmp_path / "m")]) == 0 and main([*argv, str(tmp_path / "m")]) == 0  # a model: replaced
    capsys.readouterr()
    _refused(["fit", "tiny_series", "--method", "hlm_vsh_cv", "--root", str(project), "--registry",
              "registry.yaml", "--params", '{"n_components": 2}', "-o", str(tmp_path / "x")], capsys,
             "missing: to_distance")


def test_bad_new_objects_are_refused_and_nothing_written(models, tmp_path, capsys):
    out = tmp_path / "p.csv"
    series, sequences, sims = models["tiny_series"], models["tiny_sequences"], models["sims"]
    fasta = tmp_path / "new.fa"
    fasta.write_text(">n1\nACGTZZACGT\n")
    _refused(["predict", str(sequences), str(fasta), "-o", str(out)], capsys, "new.fa", "unknown letter(s) 'Z'")
    fasta.write_text("")
    _refused(["predict", str(sequences), str(fasta), "-o", str(out)], capsys, "no FASTA records")
    _refused(["predict", str(series), str(DATA / "sequences.fa"), "-o", str(out)], capsys, "sequences.fa")
    ids = load_model(sims).reference_ids
    table = pd.DataFrame(np.full((1, len(ids)), 0.5), columns=ids)
    table.insert(0, "id", ["n1"])
    table.drop(columns=[ids[0]]).to_csv(tmp_path / "lacks.csv", index=False)
    _refused(["predict", str(sims), str(tmp_path / "lacks.csv"), "--distances", "-o", str(out)], capsys,
             f"no column for reference object '{ids[0]}'")
    table.assign(extra=0.1).to_csv(tmp_path / "extra.csv", index=False)
    _refused(["predict", str(sims), str(tmp_path / "extra.csv"), "--distances", "-o", str(out)], capsys,
             "column 'extra' is not a reference object")
    _refused(["predict", str(sims), str(DATA / "series.csv"), "-o", str(out)], capsys, "use --distances")
    series_ids = load_model(series).reference_ids
    negative = pd.DataFrame(np.full((1, len(series_ids)), 0.5), columns=series_ids).assign(**{series_ids[2]: -0.1})
    negative.insert(0, "id", ["n1"])
    negative.to_csv(tmp_path / "negative.csv", index=False)
    _refused(["predict", str(series), str(tmp_path / "negative.csv"), "--distances", "-o", str(out)], capsys,
             "id 'n1' has a negative distance")
    np.save(tmp_path / "short.npy", np.zeros((2, len(ids) - 1)))
    _refused(["predict", str(sims), str(tmp_path / "short.npy"), "--distances", "-o", str(out)], capsys,
             f"expected {len(ids)} columns")
    header_only = tmp_path / "header.csv"
    header_only.write_text(",".join(["id", *ids]) + "\n")
    _refused(["predict", str(sims), str(header_only), "--distances", "-o", str(out)], capsys, "no new objects")
    assert not out.exists()


def test_series_of_the_wrong_length_are_refused(project, tmp_path, capsys):
    """GunPoint-like: training series of one length; a new one of another length is refused."""
    root = tmp_path / "p"
    root.mkdir()
    lines = (DATA / "series.csv").read_text().splitlines()
    same = [lines[0]] + [",".join(line.split(",")[:36]) for line in lines[1:]]  # 34 values each
    (root / "series.csv").write_text("\n".join(same) + "\n")
    (root / "registry.yaml").write_text(REGISTRY)
    from hlm.cli import main

    assert main(["fit", "tiny_series", "--method", "knn", "-o", str(tmp_path / "m"), "--root", str(root),
                 "--registry", "registry.yaml", "--params", '{"n_neighbors": 1}']) == 0
    capsys.readouterr()
    _refused(["predict", str(tmp_path / "m"), str(DATA / "series.csv"), "-o", str(tmp_path / "p.csv")], capsys,
             "the training series all have 34")


def test_labels_outside_the_classes_are_a_warning(models, tmp_path, capsys):
    from hlm.cli import main

    lines = (DATA / "series.csv").read_text().splitlines()
    lines[1] = lines[1].replace(",flat,", ",wavy,", 1)
    (tmp_path / "new.csv").write_text("\n".join(lines) + "\n")
    assert main(["predict", str(models["tiny_series"]), str(tmp_path / "new.csv"), "-o",
                 str(tmp_path / "p.parquet")]) == 0
    printed = capsys.readouterr().out
    assert "warning: 1 labels are not among the model's classes (wavy)" in printed
    assert len(pd.read_parquet(tmp_path / "p.parquet")) == 12


def test_from_results_takes_the_most_frequent_choice(project, tmp_path):
    from hlm.pipeline.fit import chosen_params

    path = tmp_path / "knn.parquet"
    params = [{"n_neighbors": 4, "k": 0}, {"n_neighbors": 2}, {"n_neighbors": 4}, {"n_neighbors": 2},
              {"n_neighbors": 8}]
    pd.DataFrame({"split": [3, 0, 1, 2, 4], "params": [json.dumps(p) for p in params],
                  "cv_error": ["{}"] * 5}).to_parquet(path)
    assert chosen_params(path, "knn") == {"n_neighbors": 2}  # 2 and 4 twice each: split 0 chose 2


def test_statlog_dna_indicators_read_as_the_registry_reads_them(tmp_path):
    """New DNA sequences in the entry's own format (an R data file of 180 indicator columns): the same strings
    as the registry's reader gives for those objects; without the label column, no labels."""
    import pyreadr

    from hlm.datasets._new_objects import read_new_objects
    from hlm.datasets._objects import load_objects
    from hlm.datasets._readers import read_rda
    from hlm.datasets._registry import load_registry

    root = Path(__file__).parents[2]
    spec = load_registry(root / "config/datasets.yaml", names=["dna"])["dna"]
    ids, objects, labels, _ = load_objects(spec, root)
    frame = read_rda(root / spec.path).iloc[[0, 5, 900]]
    pyreadr.write_rdata(str(tmp_path / "new.rda"), frame, df_name="DNA")
    got_ids, got, got_labels = read_new_objects("sequences", tmp_path / "new.rda", label_column="Class")
    assert got == [objects[ids.index(i)] for i in got_ids] and got_labels == [labels[ids.index(i)] for i in got_ids]
    pyreadr.write_rdata(str(tmp_path / "unlabelled.rda"), frame.drop(columns="Class"), df_name="DNA")
    assert read_new_objects("sequences", tmp_path / "unlabelled.rda", label_column="Class")[2] is None
