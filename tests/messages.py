"""Shared test helper: the house's one-line error messages."""


def one_line(exc, *needles) -> str:
    """The message of a ``pytest.raises`` result: one line holding every needle."""
    msg = str(exc.value)
    assert "\n" not in msg, msg
    for needle in needles:
        assert needle in msg, msg
    return msg


def check_refuses(tmp_path, capsys, entry: str, *needles) -> str:
    """``hlm check`` of a registry holding one entry (YAML ``entry``, named by its first line) exits 2 with one
    line ``hlm: error: ...`` holding every needle."""
    from hlm.cli import main

    (tmp_path / "registry.yaml").write_text(entry)
    name = entry.split(":", 1)[0]
    assert main(["check", name, "--registry", str(tmp_path / "registry.yaml"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hlm: error: ") and "\n" not in err, err
    for needle in needles:
        assert needle in err, err
    return err
