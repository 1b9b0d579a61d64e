"""parse_quantity: exact values, Kubernetes rounding (MilliValue / Value round up), bad input."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler_core.api import Quantity, parse_quantity

KI, MI, GI = 2**10, 2**20, 2**30

# raw, exact value, milli_value, value
VALID = [
    ("100m", Fraction(1, 10), 100, 1),
    ("100u", Fraction(1, 10**4), 1, 1),  # micro and nano round up like milli
    ("250000u", Fraction(1, 4), 250, 1),
    ("5n", Fraction(5, 10**9), 1, 1),
    ("2000000000n", Fraction(2), 2000, 2),
    ("0.5", Fraction(1, 2), 500, 1),
    ("1", Fraction(1), 1000, 1),
    ("0", Fraction(0), 0, 0),
    ("500Mi", Fraction(500 * MI), 500 * MI * 1000, 500 * MI),
    ("1Gi", Fraction(GI), GI * 1000, GI),
    ("1.5Gi", Fraction(3 * GI, 2), 1500 * GI, 3 * GI // 2),
    ("1Ki", Fraction(KI), KI * 1000, KI),
    ("1Ei", Fraction(2**60), 2**60 * 1000, 2**60),
    ("2k", Fraction(2000), 2_000_000, 2000),
    ("3M", Fraction(3 * 10**6), 3 * 10**9, 3 * 10**6),
    ("1G", Fraction(10**9), 10**12, 10**9),
    ("1T", Fraction(10**12), 10**15, 10**12),
    ("1P", Fraction(10**15), 10**18, 10**15),
    ("12E", Fraction(12 * 10**18), 12 * 10**21, 12 * 10**18),
    ("1e3", Fraction(1000), 1_000_000, 1000),
    ("1E3", Fraction(1000), 1_000_000, 1000),
    ("1.5e3", Fraction(1500), 1_500_000, 1500),
    ("5e-3", Fraction(5, 1000), 5, 1),
    ("1e+2", Fraction(100), 100_000, 100),
    ("1.5", Fraction(3, 2), 1500, 2),
    (".5m", Fraction(1, 2000), 1, 1),
    ("0.1m", Fraction(1, 10000), 1, 1),
    ("1.", Fraction(1), 1000, 1),
    ("+2", Fraction(2), 2000, 2),
    ("-1", Fraction(-1), -1000, -1),
    ("-100m", Fraction(-1, 10), -100, 0),
    ("-1.5", Fraction(-3, 2), -1500, -1),
    ("-2Gi", Fraction(-2 * GI), -2 * GI * 1000, -2 * GI),
    (" 100m ", Fraction(1, 10), 100, 1),  # Quantity.UnmarshalJSON trims spaces
    (2, Fraction(2), 2000, 2),
    (0, Fraction(0), 0, 0),
    (-3, Fraction(-3), -3000, -3),
    (10**20, Fraction(10**20), 10**23, 10**20),
    (0.5, Fraction(1, 2), 500, 1),
    (0.1, Fraction(1, 10), 100, 1),  # from repr(0.1), not the binary float
    (1.5, Fraction(3, 2), 1500, 2),
    (-0.25, Fraction(-1, 4), -250, 0),
]


@pytest.mark.parametrize(("raw", "exact", "milli", "value"), VALID,
                         ids=[repr(v[0]) for v in VALID])
def test_parse_quantity_exact(raw: object, exact: Fraction, milli: int, value: int) -> None:
    q = parse_quantity(raw)
    assert q.exact == exact
    assert q.milli_value == milli
    assert q.value == value
    assert isinstance(q.milli_value, int) and isinstance(q.value, int)


def test_12E_is_an_exact_big_int() -> None:
    q = parse_quantity("12E")
    assert q.value == 12_000_000_000_000_000_000
    assert q.milli_value == 12_000_000_000_000_000_000_000
    assert q.value > 2**63 - 1  # beyond int64, still exact


def test_quantities_compare_by_value() -> None:
    assert parse_quantity("1Ki") == parse_quantity("1024")
    assert parse_quantity("1k") == parse_quantity("1e3") == parse_quantity(1000)
    assert parse_quantity("0.5") == parse_quantity("500m") == parse_quantity(0.5)
    assert parse_quantity("1Ki") != parse_quantity("1k")
    assert hash(parse_quantity("1k")) == hash(parse_quantity("1000"))
    assert parse_quantity("1k") != "1k"


def test_quantity_keeps_its_text() -> None:
    assert str(parse_quantity("500Mi")) == "500Mi"
    assert repr(parse_quantity("500Mi")) == "Quantity('500Mi')"
    assert str(parse_quantity(3)) == "3"
    assert str(Quantity(Fraction(1, 2))) == "1/2"


INVALID_TEXT = [
    "12x",
    "",
    "   ",
    "1.2.3",
    "Ki",
    "1KI",
    "1ki",
    "1mi",
    "e3",
    "1e",
    "1e3.5",
    "1Kie3",
    "--1",
    "+-1",
    "1 Gi",
    ".",
    "m",
    "0x10",
    "1_000",
    "\u0661\u0660\u0660",  # Arabic-Indic "100": Go accepts only ASCII 0-9
    "inf",
    "NaN",
]


@pytest.mark.parametrize("raw", INVALID_TEXT, ids=[repr(r) for r in INVALID_TEXT])
def test_invalid_text_raises_with_the_text_quoted(raw: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(raw)
    assert str(info.value) == f'invalid quantity "{raw}"'


def test_huge_exponent_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity("1e999999999")
    assert str(info.value) == 'invalid quantity "1e999999999": exponent out of range'


@pytest.mark.parametrize("raw", [float("nan"), float("inf"), float("-inf")],
                         ids=["nan", "inf", "-inf"])
def test_non_finite_floats_raise(raw: float) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(raw)
    assert str(info.value) == f'invalid quantity "{raw}"'


WRONG_TYPES = [
    (None, "invalid quantity None: expected a string or number"),
    (True, "invalid quantity True: expected a string or number"),
    (False, "invalid quantity False: expected a string or number"),
    ([1], "invalid quantity [1]: expected a string or number"),
    ({"a": 1}, "invalid quantity {'a': 1}: expected a string or number"),
    (b"1", "invalid quantity b'1': expected a string or number"),
]


@pytest.mark.parametrize(("raw", "message"), WRONG_TYPES,
                         ids=["None", "True", "False", "list", "dict", "bytes"])
def test_wrong_types_raise_value_error(raw: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_quantity(raw)
    assert str(info.value) == message
