"""Raw objects (issue 6, first part): DNA decoding, FASTA, series, distances and row blocks."""

from pathlib import Path

import numpy as np
import pytest

from hlm.errors import DataError
from hlm.objects.blocks import assemble, block_ranges, compute_block, pairwise
from hlm.objects.sequences import alignment_scores, decode_indicators, hamming, read_fasta
from hlm.objects.series import check_series, dtw, read_series_csv

DNA = Path("/work/shared/data/uci/DNA.rda")


# ---------------------------------------------------------------- StatLog DNA decoding
def test_decode_indicators_by_hand():
    # A = 100, C = 010, G = 001, T = 000 (mlbench DNA documentation)
    rows = [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0]]
    assert decode_indicators(rows) == ["ACGT", "TGCA"]


@pytest.mark.skipif(not DNA.exists(), reason="shared data not mounted")
def test_decode_the_first_dna_rows_checked_by_hand():
    import pyreadr

    frame = pyreadr.read_r(DNA)["DNA"]
    seqs = decode_indicators(frame.iloc[:3, :180].astype(int).to_numpy())
    # row 1: V1..V9 = 0 1 0 | 0 0 0 | 1 0 0 -> C T A; row 2: V1..V6 = 0 0 1 | 0 0 1 -> G G
    assert seqs[0].startswith("CTA") and seqs[1].startswith("GG")
    assert all(len(s) == 60 and set(s) <= set("ACGT") for s in seqs)
    assert frame.iloc[0, :9].astype(int).tolist() == [0, 1, 0, 0, 0, 0, 1, 0, 0]


def test_decode_rejects_bad_indicators():
    with pytest.raises(DataError, match="object 1, nucleotide 2: indicator triplet \\(1, 1, 0\\) codes no"):
        decode_indicators([[1, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0]])
    with pytest.raises(DataError, match="3 indicator columns per nucleotide, got 4"):
        decode_indicators([[1, 0, 0, 0]])


# ---------------------------------------------------------------- FASTA
def test_read_fasta_header_labels_and_side_csv(tmp_path):
    fasta = tmp_path / "s.fa"
    fasta.write_text(">a|x\nACG\nT\n>b|y\nacgg\n")
    assert read_fasta(fasta) == (["a", "b"], ["ACGT", "ACGG"], ["x", "y"])
    plain = tmp_path / "p.fa"
    plain.write_text(">a\nACGT\n>b\nAC\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\nb,y\na,x\n")
    assert read_fasta(plain, labels)[2] == ["x", "y"]


@pytest.mark.parametrize("text, labels, message", [
    (">a|x\nACGU\n", None, r"object 'a' has unknown letter\(s\) 'U'"),
    (">a|x\nACGT\n>b|x\n\n", None, "object 'b' is an empty sequence"),
    (">a|x\nACGT\n>a|y\nACGA\n", None, "duplicate id 'a'"),
    (">a\nACGT\n>b\nACGA\n", "id,label\na,x\n", r"no label for 1 object\(s\), first 'b'"),
])
def test_read_fasta_bad_input_names_file_and_object(tmp_path, text, labels, message):
    fasta = tmp_path / "bad.fa"
    fasta.write_text(text)
    side = None
    if labels:
        side = tmp_path / "labels.csv"
        side.write_text(labels)
    with pytest.raises(DataError, match=message) as err:
        read_fasta(fasta, side)
    assert "bad.fa" in str(err.value) or "labels.csv" in str(err.value)


# ---------------------------------------------------------------- distances with known answers
def test_alignment_and_hamming_known_answers():
    seqs = ["ACGTACGT", "ACGTACGA", "ACGTACGT"]
    S = alignment_scores(seqs, seqs)
    assert S[0, 0] == 8 and S[0, 2] == 8 and S[0, 1] == 6  # 7 matches - 1 mismatch
    np.testing.assert_array_equal(S, S.T)
    assert alignment_scores(["ACGT"], ["ACG"])[0, 0] == 1  # 3 matches, one gap opened: 3 - 2
    np.testing.assert_array_equal(hamming(seqs, seqs), [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    with pytest.raises(DataError, match="one length"):
        hamming(["ACG"], ["ACGT"])


def test_dtw_reduces_to_euclidean_without_warping_and_never_exceeds_it():
    rng = np.random.default_rng(0)
    series = [rng.normal(size=30) for _ in range(6)]
    euclid = np.sqrt(((np.stack(series)[:, None] - np.stack(series)[None]) ** 2).sum(-1))
    np.testing.assert_allclose(dtw(series, series, window=0.0), euclid, atol=1e-10)
    full = dtw(series, series)
    assert (full <= euclid + 1e-10).all() and np.allclose(full, full.T)
    shifted = [np.sin(np.linspace(0, 6, 50)), np.sin(np.linspace(0, 6, 50) - 0.5)]
    assert dtw(shifted, shifted)[0, 1] < 0.5 * dtw(shifted, shifted, window=0.0)[0, 1]


def test_series_bad_input(tmp_path):
    csv = tmp_path / "series.csv"
    csv.write_text("id,label,v1,v2,v3\na,x,1,2,3\nb,y,1,2,\nc,y,,,\n")
    with pytest.raises(DataError, match="object 'c' is an empty series"):
        read_series_csv(csv)
    with pytest.raises(DataError, match="different lengths"):
        check_series(["a", "b"], [np.ones(3), np.ones(2)], equal_length=True)
    with pytest.raises(DataError, match="duplicate id 'a'"):
        check_series(["a", "a"], [np.ones(3), np.ones(3)])


# ---------------------------------------------------------------- row blocks
@pytest.mark.parametrize("distance, objects", [
    ("dtw", [np.random.default_rng(1).normal(size=n) for n in (20, 20, 25, 18, 20, 22, 20)]),
    ("alignment", ["ACGTAC", "ACGTTC", "TTGTAC", "ACG", "GGGTAC", "ACGTACGT", "CA"]),
    ("euclidean", list(np.random.default_rng(2).normal(size=(7, 3)))),
])
@pytest.mark.parametrize("block_size", [1, 3, 7, 10])
def test_blocks_assemble_to_the_full_matrix(distance, objects, block_size):
    n = len(objects)
    full = pairwise(objects, objects, distance)
    blocks = [(i0, i1, compute_block(objects, distance, i0, i1)) for i0, i1 in block_ranges(n, block_size)]
    for i0, i1, b in blocks:  # only the upper triangle is computed
        assert np.isnan(b[np.arange(i1 - i0)[:, None] + i0 > np.arange(n)[None, :]]).all()
    np.testing.assert_allclose(assemble(blocks, n), full, atol=1e-12)


def test_blocks_compute_only_the_upper_triangle(monkeypatch):
    import hlm.objects.blocks as blocks

    pairs = []
    original = blocks.pairwise
    monkeypatch.setattr(blocks, "pairwise", lambda r, c, d, o=None: pairs.append(len(r) * len(c)) or original(r, c, d, o))
    objects = list(np.random.default_rng(3).normal(size=(40, 2)))
    for i0, i1 in block_ranges(40, 10):
        blocks.compute_block(objects, "euclidean", i0, i1)
    assert sum(pairs) == 40 * 41 // 2  # exactly the upper triangle, diagonal included


def test_assemble_checks_coverage():
    b = compute_block([np.zeros(2), np.ones(2), np.full(2, 2.0)], "euclidean", 0, 2)
    with pytest.raises(DataError, match="row 2 is covered by 0 blocks"):
        assemble([(0, 2, b)], 3)


# ---------------------------------------------------------------- bring your own objects (README examples)
@pytest.mark.parametrize("name, kind, conversion", [
    ("tiny_series", "series", "identity"), ("tiny_sequences", "sequences", "bound_minus"),
    ("tiny_vectors", "vectors", "cityblock"),
])
def test_user_entries_in_tests_data(name, kind, conversion):
    from hlm.cli import objects_artifact
    from hlm.data.prepare import prepare_dataset
    from hlm.data.registry import load_registry

    root = Path(__file__).parent / "data"
    spec = load_registry(root / "tiny_registry.yaml")[name]
    art = objects_artifact(spec, root) if kind != "vectors" else prepare_dataset(spec, root)
    assert art.conversion.startswith(conversion) or art.metadata.get("to_distance") == conversion
    assert art.distances.shape[0] == art.distances.shape[1] and np.allclose(art.distances, art.distances.T)
    if name == "tiny_vectors":  # |1 - 0| + 0 and |3 - 0| + |4 - 0|
        assert art.distances[0, 1] == 1 and art.distances[0, 2] == 7
    if name == "tiny_sequences":  # 27-mers: self-score 27, d = 27 - score, native similarity kept
        assert art.similarities[0, 0] == 27 and art.distances[0, 1] == 27 - art.similarities[0, 1]
    if name == "tiny_series":  # the two classes separate: each object's nearest neighbour shares its label
        D = art.distances + np.diag(np.full(art.n, np.inf))
        assert (art.labels[D.argmin(axis=1)] == art.labels).mean() >= 0.9


def test_hlm_check_names_the_bad_object(tmp_path, capsys):
    from hlm.cli import main

    (tmp_path / "bad.fa").write_text(">a|x\nACGT\n>b|y\nACXT\n")
    (tmp_path / "reg.yaml").write_text("bad:\n  path: bad.fa\n  format: fasta\n  kind: sequences\n"
                                       "  distance: hamming\n")
    assert main(["check", "bad", "--registry", str(tmp_path / "reg.yaml"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "bad.fa" in err and "object 'b' has unknown letter(s) 'X'" in err


def test_series_csv_rejects_a_gap_inside_a_series(tmp_path):
    csv = tmp_path / "gap.csv"
    csv.write_text("id,label,v1,v2,v3\na,x,1,,3\n")
    with pytest.raises(DataError, match="line 2: object 'a' has an empty value inside the series"):
        read_series_csv(csv)
