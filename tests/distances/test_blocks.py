"""Raw objects: DNA decoding, FASTA, series, distances and row blocks."""

from pathlib import Path

import numpy as np
import pytest

from hlm.datasets._sequences import decode_indicators, read_fasta
from hlm.datasets._series import check_series, read_series_csv
from hlm.distances._alignment import alignment_scores
from hlm.distances._blocks import assemble, block_ranges, compute_block, pairwise
from hlm.distances._dtw import dtw
from hlm.distances._hamming import hamming
from hlm.errors import DataError
from messages import one_line

DNA = Path(__file__).resolve().parents[2] / "data/raw/DNA.rda"


# ---------------------------------------------------------------- StatLog DNA decoding
def test_decode_indicators_by_hand():
    # A = 100, C = 010, G = 001, T = 000 (mlbench DNA documentation)
    rows = [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0]]
    assert decode_indicators(rows) == ["ACGT", "TGCA"]


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
    with pytest.raises(DataError, match="lengths 2 to 3, but the Euclidean distance needs series of one length"):
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
    import hlm.distances._blocks as blocks

    pairs = []
    original = blocks.pairwise
    monkeypatch.setattr(
        blocks, "pairwise", lambda r, c, d, o=None: pairs.append(len(r) * len(c)) or original(r, c, d, o)
    )
    objects = list(np.random.default_rng(3).normal(size=(40, 2)))
    for i0, i1 in block_ranges(40, 10):
        blocks.compute_block(objects, "euclidean", i0, i1)
    assert sum(pairs) == 40 * 41 // 2  # exactly the upper triangle, diagonal included


@pytest.mark.parametrize("rows_per_part", [1, 2, 5, 100])
def test_assemble_in_place_by_row_parts_equals_the_mirrored_upper_triangle(monkeypatch, rows_per_part):
    """The lower triangle filled part by part, in place, is the upper triangle's mirror exactly (copies);
    what the blocks hold below the diagonal is never read; a NaN above it is refused, in any part."""
    from hlm.distances import _conversions as conversions

    row_blocks = conversions.row_blocks
    monkeypatch.setattr(conversions, "row_blocks", lambda n_rows, n_cols: row_blocks(n_rows, n_cols,
                                                                                      rows_per_part * n_cols))
    n = 9
    U = np.random.default_rng(5).normal(size=(n, n))
    junk = U.copy()
    junk[np.tril_indices(n, -1)] = np.nan  # as compute_block leaves it
    blocks = [(i0, i1, junk[i0:i1]) for i0, i1 in block_ranges(n, 4)]
    expected = np.where(np.triu(np.ones((n, n), dtype=bool)), U, U.T)
    np.testing.assert_array_equal(assemble(blocks, n), expected)
    junk[6, 7] = np.nan
    with pytest.raises(DataError, match="missing or non-finite values in the upper triangle"):
        assemble([(i0, i1, junk[i0:i1]) for i0, i1 in block_ranges(n, 4)], n)


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
    from hlm.datasets._prepare import prepare_dataset
    from hlm.datasets._registry import load_registry

    root = Path(__file__).parents[1] / "data"
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


# ---------------------------------------------------------------- a folder of series (format: folder)
DATA = Path(__file__).parents[1] / "data"


def write_files(root, files: dict) -> Path:
    """Write ``{relative path: text}`` under ``root``; returns root."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_series_folder_layout_by_hand(tmp_path):
    from hlm.datasets._series import read_series_folder

    folder = write_files(tmp_path / "f", {
        "up/a.csv": "1,2,3\n",         # a row
        "up/b.txt": "1\n2.5\n\n4\n",    # a column (blank lines skipped)
        "down/c": "3 2\t1 0\n",        # no suffix, whitespace
        "down/d.tsv": "5,\n4,\n",      # a column with trailing commas
        "down/.DS_Store": "junk", ".hidden/x.csv": "junk", "up/.e.csv": "junk",
    })
    ids, series, labels = read_series_folder(folder)
    assert ids == ["c", "d", "a", "b"] and labels == ["down", "down", "up", "up"]  # sorted paths
    for x, want in zip(series, [[3, 2, 1, 0], [5, 4], [1, 2, 3], [1, 2.5, 4]]):
        np.testing.assert_array_equal(x, want)


def test_series_folder_with_labels_path(tmp_path):
    from hlm.datasets._series import read_series_folder

    folder = write_files(tmp_path / "f", {"a.csv": "1,2\n", "b": "3\n4\n5\n"})
    labels = write_files(tmp_path, {"labels.csv": "id,label\nb,y\na,x\nz,unused\n"}) / "labels.csv"
    ids, series, got = read_series_folder(folder, labels)
    assert ids == ["a", "b"] and got == ["x", "y"]  # matched by id; extra ids ignored, as for FASTA
    np.testing.assert_array_equal(series[1], [3, 4, 5])


def test_tiny_series_folder_entry_matches_the_csv_entry():
    """tests/data/series_folder holds the rows of series.csv as files: same objects, same DTW distances."""
    from hlm.cli import objects_artifact
    from hlm.datasets._objects import load_objects
    from hlm.datasets._registry import load_registry

    reg = load_registry(DATA / "tiny_registry.yaml")
    ids, objs, labels, meta = load_objects(reg["tiny_series_folder"], DATA)
    assert ids == ["s1", "s11", "s3", "s5", "s7", "s9", "s0", "s10", "s2", "s4", "s6", "s8"]
    assert labels == ["bump"] * 6 + ["flat"] * 6
    assert objs[0][:3].tolist() == [-0.210, -0.079, -0.218] and objs[0].size == 40  # s1.csv, a column
    assert objs[9][-2:].tolist() == [-0.196, -0.115] and objs[9].size == 40  # s4.tsv, a row
    assert [o.size for o in objs].count(34) == 4  # s0, s3, s6, s9: shorter
    assert meta["source"] == "series_folder" and len(meta["sha256"]) == 64
    folder = objects_artifact(reg["tiny_series_folder"], DATA)
    table = objects_artifact(reg["tiny_series"], DATA)
    order = [table.ids.tolist().index(i) for i in ids]
    assert table.labels[order].tolist() == labels
    np.testing.assert_array_equal(folder.distances, table.distances[np.ix_(order, order)])


def test_folder_sha256_covers_paths_and_contents(tmp_path):
    from hlm.datasets._objects import load_objects
    from hlm.datasets._prepare import folder_sha256, source_sha256
    from hlm.datasets._registry import validate_entry

    folder = write_files(tmp_path / "f", {"x/a.csv": "1,2\n", "x/c.csv": "2\n", "y/b.csv": "3,4\n",
                                          "y/d.csv": "4\n", "y/e.csv": "5\n"})
    digest = folder_sha256(folder)
    assert source_sha256(folder) == digest
    (folder / "x/.DS_Store").write_text("ignored")
    assert folder_sha256(folder) == digest
    (folder / "y/b.csv").write_text("3,5\n")
    assert folder_sha256(folder) != digest
    (folder / "y/b.csv").write_text("3,4\n")
    (folder / "y/b.csv").rename(folder / "x/b.csv")  # same bytes, another class
    assert folder_sha256(folder) != digest
    spec = validate_entry("f", {"path": "f", "format": "folder", "kind": "series", "distance": "dtw",
                                "sha256": folder_sha256(folder)})
    assert load_objects(spec, tmp_path)[3]["sha256"] == spec.sha256
    (folder / "x/a.csv").write_text("1,3\n")
    with pytest.raises(DataError, match="dataset 'f' \\(f\\): SHA-256 .* does not match field 'sha256'"):
        load_objects(spec, tmp_path)


@pytest.mark.parametrize("files, labels, message", [
    ({}, None, r"f: empty folder"),
    ({"x/a.csv": ""}, None, r"x/a.csv: object 'a' is an empty series"),
    ({"x/a.csv": "1,2\n", "x/b.csv": "1,zwei,3\n"}, None, r"x/b.csv: object 'b' has a non-numeric value 'zwei'"),
    ({"x/a.csv": "t,v\n1,2\n"}, None, r"x/a.csv: object 'a' has a non-numeric value 't' \(value 1; .*no header"),
    ({"x/a.csv": "1,2\n3\n"}, None, r"x/a.csv: object 'a' has 1 value\(s\) on line 2 and 2 on line 1"),
    ({"x/a.csv": "value\n1\n2\n"}, None, r"x/a.csv: object 'a' has a non-numeric value 'value' \(value 1; .*no header"),
    ({"x/a.csv": "1,,2\n"}, None, r"x/a.csv: object 'a' has an empty value"),
    ({"x/a.csv": "1,nan\n"}, None, r"x/a.csv: object 'a' has NaN or infinite values"),
    ({"x/a.csv": "1\n", "y/a.txt": "2\n"}, None, r"f: duplicate id 'a' \(x/a.csv and y/a.txt\)"),
    ({"a.csv": "1\n", "a.txt": "2\n"}, "id,label\na,x\n", r"f: duplicate id 'a' \(a.csv and a.txt\)"),
    ({"a.csv": "1\n", "x/b.csv": "2\n"}, None, r"f: series file 'a.csv' next to class sub-folders \(x/\)"),
    ({"a.csv": "1\n"}, None, r"f: series file 'a.csv' without a class"),
    ({"a.csv": "1\n", "x/b.csv": "2\n"}, "id,label\na,x\nb,y\n", r"f: sub-folder 'x'; with labels_path"),
    ({"x/y/a.csv": "1\n"}, None, r"x/y: a class folder holds series files, not sub-folders"),
    ({"x/a.json": "[1]\n"}, None, r"x/a.json: a series file ends in .csv, .tsv, .txt or has no suffix"),
    ({f"{i}.csv": "1\n" for i in "abcde"}, "id,label\nb,y\n",
     r"labels.csv: no label for 4 object\(s\), first 'a', 'c', 'd', \.\.\."),
])
def test_series_folder_errors_name_the_folder_or_file_and_object(tmp_path, files, labels, message):
    from hlm.datasets._series import read_series_folder

    folder = write_files(tmp_path / "f", files)
    folder.mkdir(exist_ok=True)
    side = write_files(tmp_path, {"labels.csv": labels}) / "labels.csv" if labels else None
    with pytest.raises(DataError, match=message) as err:
        read_series_folder(folder, side)
    assert len(str(err.value).splitlines()) == 1


def test_hlm_check_of_a_folder_entry(tmp_path, capsys):
    from hlm.cli import main

    write_files(tmp_path, {"f/up/a.csv": "0,1,2,1,0\n", "f/up/b.csv": "0,1,2,2,1,0\n", "f/down/c.csv": "2,1,0\n",
                           "f/down/d.csv": "2,1,1,0\n",
                           "reg.yaml": "mine:\n  path: f\n  format: folder\n  kind: series\n  distance: dtw\n"})
    args = ["check", "mine", "--registry", str(tmp_path / "reg.yaml"), "--root", str(tmp_path)]
    assert main(args) == 0
    assert "mine: 4 objects, 2 classes (down: 2, up: 2)" in capsys.readouterr().out
    (tmp_path / "f/down/d.csv").write_text("2,1,x\n")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "d.csv: object 'd' has a non-numeric value 'x'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("entry, needle", [
    ({"kind": "sequences", "distance": "alignment"}, "field 'format' must be one of fasta, rda with kind sequences"),
    ({"kind": "distance"}, "field 'kind' must be one of series with format folder (got 'distance')"),
])
def test_schema_allows_format_folder_only_for_series(entry, needle):
    from hlm.datasets._registry import validate_entry
    from hlm.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        validate_entry("f", {"path": "f", "format": "folder", **entry})
    assert needle in str(err.value)
    assert validate_entry("f", {"path": "f", "format": "folder", "kind": "series", "distance": "dtw",
                                "labels_path": "l.csv", "window": 0.1}).format == "folder"


def test_a_distance_refuses_an_option_it_does_not_take():
    """Options go to the distance's function by name: one it does not declare is a one-line DataError (not a
    TypeError from the function), and DTW's window reaches it."""
    from hlm.distances import pairwise

    x = [np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0, 1.0])]
    with pytest.raises(DataError) as exc:
        pairwise([[0.0, 1.0]], [[1.0, 1.0]], "euclidean", {"window": 0.1})
    one_line(exc, "distance 'euclidean' has no option 'window' (it takes none)")
    with pytest.raises(DataError) as exc:
        pairwise(x, x, "dtw", {"widow": 0.1})
    one_line(exc, "distance 'dtw' has no option 'widow' (its options: window)")
    assert pairwise(x, x, "dtw", {"window": 0.0})[0, 1] == pytest.approx(np.sqrt(2.0))  # no warping: Euclidean
