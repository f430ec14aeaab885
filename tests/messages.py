"""Shared test helper: the house's one-line error messages."""


def one_line(exc, *needles) -> str:
    """The message of a ``pytest.raises`` result: one line holding every needle."""
    msg = str(exc.value)
    assert "\n" not in msg, msg
    for needle in needles:
        assert needle in msg, msg
    return msg
