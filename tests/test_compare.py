"""The checks' one comparison (quizapp.checking.compare, re-exported by the harness): NaN is close to
nothing, an infinity only to itself, -0.0 equals 0.0, and a failure names the worst element."""

from __future__ import annotations

import math
import types

import pytest
import torch

from quizapp.checking import harness
from quizapp.checking.compare import (
    BFLOAT16,
    EXACT,
    FLOAT16,
    FLOAT32,
    FLOAT64,
    Tol,
    close_elements,
    is_close,
    largest_error,
    mismatch,
    scale_of,
    tolerance_for,
)

NAN, INF = math.nan, math.inf


# -- NaN ---------------------------------------------------------------------------------------

def test_nan_in_yours_only_is_a_mismatch_named_in_the_message():
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    message = mismatch(expected * NAN, expected, FLOAT32, what="outputs", against="the reference")
    assert message is not None
    assert message.startswith("4 of 4 outputs differ from the reference; the worst at [0, 0]: yours NaN, "
                              "the reference 1 (NaN is close to nothing; tolerance 1.1e-05)"), message
    assert message.endswith("; 4 of yours are NaN"), message


def test_nan_in_expected_only_is_a_mismatch():
    message = mismatch(torch.tensor([1.0, 2.0]), torch.tensor([1.0, NAN]))
    assert message is not None and "at [1]: yours 2, expected NaN" in message, message
    assert "the expected values are NaN at 1 of them" in message, message


def test_nan_in_both_at_the_same_place_counts_only_when_asked():
    a, b = torch.tensor([NAN, 1.0]), torch.tensor([NAN, 1.0])
    message = mismatch(a, b)
    assert message is not None and "not even to NaN" in message, message
    assert not is_close(a, b)
    assert mismatch(a, b, equal_nan=True) is None
    assert is_close(a, b, equal_nan=True)
    # equal_nan pairs NaN with NaN only: a NaN against a number is still a mismatch.
    assert mismatch(torch.tensor([NAN, 1.0]), torch.tensor([0.0, 1.0]), equal_nan=True) is not None


def test_a_nan_tolerance_is_refused():
    with pytest.raises(ValueError):
        Tol(rtol=NAN)
    with pytest.raises(ValueError):
        Tol(atol=-1e-6)


# -- infinities and signed zeros ---------------------------------------------------------------

def test_an_infinity_is_close_only_to_the_same_infinity():
    message = mismatch(torch.tensor([INF, 1.0]), torch.tensor([-INF, 1.0]))
    assert message is not None and "yours inf, expected -inf" in message, message
    assert "an infinity is close only to the same infinity" in message and "1 of yours is infinite" in message
    assert mismatch(torch.tensor([INF, -INF]), torch.tensor([INF, -INF]), EXACT) is None
    assert mismatch(torch.tensor([INF], dtype=torch.float64), torch.tensor([1e308], dtype=torch.float64)) is not None
    # Even a huge tolerance does not make an infinity close to a finite number.
    assert not is_close(torch.tensor([INF]), torch.tensor([1.0]), Tol(atol=1e300))
    assert "the expected values are infinite at 1 of them" in mismatch(torch.tensor([1.0, 1.0]),
                                                                       torch.tensor([1.0, INF]))


def test_negative_zero_equals_zero():
    assert mismatch(torch.tensor([-0.0, 0.0]), torch.tensor([0.0, -0.0]), EXACT) is None
    assert is_close(-0.0, 0.0, EXACT)


# -- shapes, dtypes, what is compared ----------------------------------------------------------

def test_a_shape_mismatch_names_both_shapes_and_never_broadcasts():
    assert mismatch(torch.zeros(3), torch.zeros(2, 3), what="outputs") == \
        "outputs of shape (3,); expected shape (2, 3)"
    assert mismatch(torch.zeros(1), torch.tensor(0.0)) == "values of shape (1,); expected shape ()"
    assert not is_close(torch.zeros(3), torch.zeros(2, 3))


def test_dtypes_compare_by_value_unless_the_dtype_is_asked_for():
    x = torch.tensor([0.1, 0.2, 0.3])
    assert mismatch(x.double(), x) is None  # compared in float64: the float32 values themselves
    assert mismatch(x.double(), x, exact_dtype=True) == "values of dtype float64; expected dtype float32"
    assert mismatch(torch.tensor([1, 2]), torch.tensor([1, 2])) is None
    assert mismatch(torch.tensor([1, 3]), torch.tensor([1, 2])) is not None  # integers: exact
    assert mismatch(torch.tensor([True, False]), torch.tensor([True, True])) is not None


def test_the_default_tolerance_is_the_expected_dtypes():
    assert tolerance_for(torch.float32) is FLOAT32 and tolerance_for(torch.float64) is FLOAT64
    assert tolerance_for(torch.bfloat16) is BFLOAT16 and tolerance_for(torch.float16) is FLOAT16
    assert tolerance_for(torch.int64) is EXACT
    half = torch.tensor([1.0], dtype=torch.bfloat16)
    assert mismatch(torch.tensor([1.01]), half) is None  # 1% is within bfloat16's 4 eps (3.1%)
    assert mismatch(torch.tensor([1.1]), half) is not None
    assert mismatch(torch.tensor([1.0 + 1e-6]), torch.tensor([1.0])) is None  # float32: 1e-5 relative
    assert mismatch(torch.tensor([1.0 + 1e-4]), torch.tensor([1.0])) is not None
    assert mismatch(1.0 + 1e-13, 1.0) is None  # Python numbers: float64's 1e-12
    assert mismatch(1.0 + 1e-11, 1.0) == "yours 1.00000000001, expected 1 (off by 1e-11, tolerance 1e-12)"


def test_what_is_not_a_tensor_or_a_number_is_named():
    assert mismatch([1.0, 2.0], torch.zeros(2)) == "expected a tensor of shape (2,), got a list"
    assert mismatch("1.0", 1.0) == "expected a number, got a str"
    assert mismatch(True, 1.0) == "expected a number, got a bool"
    assert mismatch(torch.zeros(2, dtype=torch.complex64), torch.zeros(2)).startswith("expected a tensor")
    with pytest.raises(TypeError):
        mismatch(1.0, "1.0")  # the expected side is the grader's own: a bad one is the grader's bug


def test_a_tensor_subclass_is_compared_as_the_plain_tensor_it_holds():
    class AlwaysClose(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.Tensor.isnan, torch.Tensor.isfinite, torch.Tensor.__eq__):
                return torch.ones(args[0].shape, dtype=torch.bool)  # answers every test its own way
            return super().__torch_function__(func, types, args, kwargs or {})

    lying = torch.tensor([NAN, 5.0]).as_subclass(AlwaysClose)
    assert mismatch(lying, torch.tensor([1.0, 2.0])) is not None


# -- the message -------------------------------------------------------------------------------

def test_the_worst_element_is_named_with_its_index_both_values_and_the_tolerance():
    expected = torch.zeros(3, 4)
    actual = expected.clone()
    actual[0, 1], actual[1, 2] = 0.1, 0.5
    message = mismatch(actual, expected, Tol(atol=0.01), what="weights")
    assert message == ("2 of 12 weights differ from the expected; the worst at [1, 2]: yours 0.5, expected 0 "
                       "(off by 0.5, tolerance 0.01)"), message


def test_the_worst_is_the_largest_multiple_of_its_own_tolerance():
    # Off by 1 at 1000 (1e-3 relative) is closer than off by 0.1 at 0.001 (100x), though larger.
    message = mismatch(torch.tensor([1001.0, 0.101]), torch.tensor([1000.0, 0.001]), Tol(rtol=1e-5))
    assert "the worst at [1]: yours 0.101, expected 0.001" in message, message


def test_of_largest_takes_the_tolerance_of_the_largest_expected_value():
    expected = torch.tensor([100.0, 1e-6])
    nearly = torch.tensor([100.0, 2e-6])  # 100% off at its own place, 1e-8 of the largest value
    assert mismatch(nearly, expected, Tol(rtol=1e-5)) is not None
    assert mismatch(nearly, expected, Tol(rtol=1e-5, of_largest=True)) is None
    message = mismatch(torch.tensor([101.0, 0.0]), expected, Tol(rtol=1e-5, of_largest=True))
    assert "off by 1, tolerance 0.001 = 1e-05 x the largest |value| 100" in message, message
    # An expected that is all zero has scale 1: rtol still bounds the difference.
    assert mismatch(torch.tensor([1e-6]), torch.tensor([0.0]), Tol(rtol=1e-5, of_largest=True)) is None
    assert scale_of(torch.zeros(3)) == 1.0 and scale_of(torch.tensor([-3.0, NAN, INF])) == 3.0


def test_a_number_compares_without_an_index():
    assert mismatch(1.0, 1.0) is None and mismatch(torch.tensor(2.0), 2) is None
    assert mismatch(NAN, 1.0) == "yours NaN, expected 1 (NaN is close to nothing; tolerance 1e-12)"
    assert mismatch(1.5, 1.0, Tol(rtol=0.1), yours="the loss") == \
        "the loss 1.5, expected 1 (off by 0.5, tolerance 0.1)"


def test_an_empty_tensor_equals_an_empty_tensor():
    assert mismatch(torch.zeros(0), torch.zeros(0)) is None
    assert mismatch(torch.zeros(0, 3), torch.zeros(0, 3), EXACT) is None
    assert mismatch(torch.zeros(0), torch.zeros(1)) == "values of shape (0,); expected shape (1,)"
    assert largest_error(torch.zeros(0), torch.zeros(0)) == 0.0


# -- the other forms of the same rule ----------------------------------------------------------

def test_close_elements_says_where_and_broadcasts():
    got = close_elements(torch.tensor([[1.0, NAN], [0.0, INF]]), 0.0, Tol(atol=1.0))
    assert got.tolist() == [[True, False], [True, False]]
    assert close_elements(torch.tensor([NAN]), torch.tensor([NAN]), equal_nan=True).tolist() == [True]


def test_largest_error_is_relative_to_the_largest_expected_value_and_infinite_for_nan():
    assert largest_error(torch.tensor([2.0, 1.5]), torch.tensor([2.0, 1.0])) == pytest.approx(0.25)
    assert largest_error(torch.tensor([NAN, 1.0]), torch.tensor([1.0, 1.0])) == INF
    assert largest_error(torch.tensor([INF]), torch.tensor([INF])) == 0.0
    assert largest_error(torch.zeros(2), torch.zeros(3)) == INF


# -- the harness's face: failing a check -------------------------------------------------------

def test_the_harness_re_exports_the_comparison():
    for name in ("Tol", "EXACT", "FLOAT32", "FLOAT64", "FLOAT16", "BFLOAT16", "mismatch", "is_close",
                 "close_elements", "largest_error", "scale_of", "tolerance_for"):
        assert getattr(harness, name) is globals()[name]


def test_check_close_fails_with_where_what_and_why():
    harness.check_close(torch.ones(2), torch.ones(2))
    with pytest.raises(harness.CheckFailed) as failed:
        harness.check_close(torch.tensor([1.0, NAN]), torch.ones(2), where="bias=True", why="the layer is broken",
                            what="outputs")
    assert str(failed.value).startswith("bias=True: 1 of 2 outputs differ from the expected; the worst at [1]: ")
    assert str(failed.value).endswith("; 1 of yours is NaN; the layer is broken")


def test_harness_close_still_refuses_infinities():
    assert harness.close(1.0, 1.0 + 1e-9, 1e-6) and not harness.close(INF, INF, 1e-6)
    assert not harness.close(NAN, 1.0, 1.0)


def test_max_param_diff_reads_nan_as_infinitely_far():
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    b.load_state_dict(a.state_dict())
    assert harness.max_param_diff(a, b) == (0.0, "")
    with torch.no_grad():
        a.bias[0] = NAN
    assert harness.max_param_diff(a, b) == (INF, "bias")


def test_same_outputs_runs_both_on_copies_of_the_same_inputs():
    def learner(x):
        x.mul_(2)  # writes into its input: the reference must not see it
        return x

    def reference(x):
        return x * 2

    x = torch.arange(3.0)
    yours, theirs = harness.same_outputs(learner, reference, x)
    assert yours.tolist() == theirs.tolist() == [0.0, 2.0, 4.0] and x.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(harness.CheckFailed, match=r"^x = arange\(3\): 2 of 3 outputs differ from the reference"):
        harness.same_outputs(lambda x: x + 1, reference, x, where="x = arange(3)")


def test_same_outputs_lets_the_learners_error_go_up_with_the_inputs_named():
    def broken(x):
        raise RuntimeError("shape mismatch")

    ctx = harness.Context(types.ModuleType("solution"), None, torch.device("cpu"), None)
    with pytest.raises(RuntimeError) as raised:
        harness.same_outputs(broken, lambda x: x, torch.ones(2), ctx=ctx, where="x = ones(2)")
    assert harness.error_inputs(raised.value) == "with x = ones(2): "


def test_same_outputs_keeps_requires_grad_on_the_copies():
    seen = []
    x = torch.ones(2, requires_grad=True)
    harness.same_outputs(lambda t: seen.append(t.requires_grad and t is not x) or t.detach(), lambda t: t.detach(), x)
    assert seen == [True]
