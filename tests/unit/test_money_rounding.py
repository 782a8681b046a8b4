"""USD shown to people (e.g. the 402 message) rounds half away from zero, as documented."""

from switchgate.money import format_usd


def test_display_rounds_half_away_from_zero() -> None:
    # Half-even would give 0.000002 for 2.5 millionths and 0.000000 for half a millionth.
    assert format_usd(2_500_000) == "0.000003"
    assert format_usd(500_000) == "0.000001"
    assert format_usd(-2_500_000) == "-0.000003"
    assert format_usd(1_499_999) == "0.000001"
    assert format_usd(10**12) == "1.000000"
    assert format_usd(1, 12) == "0.000000000001"  # exact, never "1E-12"
