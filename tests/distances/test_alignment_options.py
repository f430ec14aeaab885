"""Alignment with a substitution matrix, local or global, and gap scores (hlm.distances._alignment)."""

import numpy as np
import pytest

from hlm.distances import pairwise
from messages import check_refuses

PROTEINS = ">p1|globin\nHEAGAWGHEE\n>p2|globin\nHEAGAWGHEA\n>p3|globin\nHEAGSWGHEE\n>p4|kinase\nPAWHEAE\n" \
           ">p5|kinase\nPAWHEAQ\n>p6|kinase\nPSWHEAE\n"


@pytest.mark.parametrize("mode, expected", [("global", 1.0), ("local", 28.0)])
def test_durbins_example(mode, expected):
    """Biological Sequence Analysis (Durbin et al., 1998), section 2.3: HEAGAWGHEE against PAWHEAE, BLOSUM50,
    a linear gap of -8: global score 1, local 28 (AWGHE against AW-HE)."""
    scores = pairwise(["HEAGAWGHEE"], ["PAWHEAE"], "alignment",
                      {"mode": mode, "substitution_matrix": "BLOSUM50", "open_gap_score": -8, "extend_gap_score": -8})
    assert scores[0, 0] == expected


def test_local_alignment_by_hand():
    """Smith-Waterman, match +1, mismatch -1, gaps -2/-1: the best local match of AAACGTAAA and TTCGTT is CGT."""
    assert pairwise(["AAACGTAAA"], ["TTCGTT"], "alignment", {"mode": "local"})[0, 0] == 3.0
    assert pairwise(["AAACGTAAA"], ["TTCGTT"], "alignment")[0, 0] < 3.0  # global: the ends cost


def test_a_protein_entry_under_blosum62(tmp_path, capsys):
    from Bio.Align import PairwiseAligner, substitution_matrices

    from hlm.cli import main
    from hlm.datasets._registry import load_registry
    from hlm.pipeline.fit import objects_artifact

    (tmp_path / "p.fa").write_text(PROTEINS)
    (tmp_path / "registry.yaml").write_text(
        "prot:\n  path: p.fa\n  format: fasta\n  kind: sequences\n  alphabet: protein\n  distance: alignment\n"
        "  distance_params: {substitution_matrix: BLOSUM62, mode: local, open_gap_score: -10, extend_gap_score: -1}\n")
    assert main(["check", "prot", "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("prot: 6 objects, 2 classes")
    spec = load_registry(tmp_path / "registry.yaml")["prot"]
    artifact = objects_artifact(spec, tmp_path, 4)  # row blocks of 4: the upper triangle in two blocks
    seqs = [line for line in PROTEINS.splitlines() if not line.startswith(">")]
    aligner = PairwiseAligner(mode="local", substitution_matrix=substitution_matrices.load("BLOSUM62"),
                              open_gap_score=-10, extend_gap_score=-1)
    expected = np.array([[aligner.score(a, b) for b in seqs] for a in seqs])
    np.testing.assert_array_equal(artifact.similarities, expected)


@pytest.mark.parametrize("params, message", [
    ("{substitution_matrix: BLOSUM99}", "no substitution matrix 'BLOSUM99' in Biopython; known: "),
    ("{mode: semi}", "alignment mode must be global or local, got 'semi'"),
    ("{gap: -2}", "distance alignment has no parameter 'gap'"),
    ("{substitution_matrix: /etc/passwd}", "no substitution matrix '/etc/passwd' in Biopython"),  # names only
])
def test_bad_alignment_params_are_one_line(tmp_path, capsys, params, message):
    check_refuses(tmp_path, capsys, "prot:\n  path: p.fa\n  format: fasta\n  kind: sequences\n"
                  f"  distance: alignment\n  distance_params: {params}\n", message)


def test_letters_the_matrix_lacks_are_one_line(tmp_path, capsys):
    """U (selenocysteine) is a protein letter, but BLOSUM62 has no row for it."""
    from hlm.cli import main

    (tmp_path / "p.fa").write_text(PROTEINS.replace("PAWHEAQ", "PAWHEAU"))
    (tmp_path / "registry.yaml").write_text(
        "prot:\n  path: p.fa\n  format: fasta\n  kind: sequences\n  alphabet: protein\n  distance: alignment\n"
        "  distance_params: {substitution_matrix: BLOSUM62}\n")
    assert main(["check", "prot", "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "sequence 'PAWHEAU' has letter(s) U that the substitution matrix lacks" in err and "\n" not in err
