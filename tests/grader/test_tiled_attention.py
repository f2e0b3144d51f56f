"""tiled_attention: what the checks' inputs and the statement claim, checked on the helper modules
themselves (its grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

import math

from gradeutil import EXERCISES

FOLDER = EXERCISES / "tiled_attention"


def helpers():
    from quizapp.checking.harness import sibling_module

    checks = str(FOLDER / "checks.py")
    return sibling_module(checks, "scenarios"), sibling_module(checks, "variants")


def load_reference():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tiled_attention_reference", FOLDER / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checked_cases(name: str):
    """A case list of checks.py (loaded once by path, as the grader loads it)."""
    import sys

    from quizapp.checking.loading import load_module

    module = sys.modules.get("tiled_attention_checks_under_test") or load_module(
        "tiled_attention_checks_under_test", FOLDER / "checks.py")
    return getattr(module, name)


def test_every_mistake_the_messages_name_shows_on_the_checked_inputs():
    """Each mistake a message may name differs from SDPA's output on some case of the check that
    names it (on others it may coincide: one key block needs no rescale), and the right output is
    never said to match one."""
    scn, variants = helpers()
    shown: dict[str, bool] = {}
    for name in ("MATCHES", "RAGGED", "CAUSAL_ONE_BLOCK", "CAUSAL_TILED"):
        for c in checked_cases(name):
            q, k, v = scn.exact_inputs(c)
            want = variants.exact(c)
            assert variants.output_cause(c, want.float(), want) == "", c
            causes = (variants.mask_causes(c, q, k, v) if c.causal
                      else variants.formula_causes(c, q, k, v, want, want))
            for wanted, words in causes:
                key = f"{name}: {words.split(':')[0].split(' (')[0]}"
                shown[key] = shown.get(key, False) or not variants._matches(want, wanted)
    assert [key for key, seen in shown.items() if not seen] == []
    assert len(shown) >= 20, sorted(shown)


def test_large_scores_are_exact_in_float32_and_as_large_as_claimed():
    import torch

    scn, _ = helpers()
    for c in checked_cases("LARGE"):
        q, k, _ = scn.exact_inputs(c)
        exact = (q @ k.transpose(-2, -1)) / math.sqrt(c.d)
        single = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(c.d)
        assert torch.equal(single.double(), exact), c
        if c.large == "negative":
            assert exact.max() < -0.98e4 and exact.min() > -1.02e4, (c, exact.min(), exact.max())
            spread = (exact.amax(-1) - exact.amin(-1)).min()
            assert 1 < spread < 50, (c, spread)  # a real softmax, not one key alone
        else:
            assert exact.max() > 5e3 and exact.min() < -5e3, c


def test_the_memory_bound_catches_what_the_statement_says_and_fits_one_tile():
    scn, _ = helpers()
    for c in checked_cases("MEMORY"):
        bound = scn.memory_bound(c)
        assert c.b * c.h * c.nq * c.block <= bound  # one score tile per (B, H)
        assert c.b * c.h * c.nq * c.nk > bound  # the full score matrix
        assert c.nq * c.nk > bound  # a full causal mask, even without B and H
    first = checked_cases("MEMORY")[0]
    assert first.b * first.h * first.block * first.nk > scn.memory_bound(first)  # query blocks against all keys


def test_the_worked_example_of_the_statement():
    """Scores [0.5, 2, 3, 1, -1], values [1, 2, 3, 4, 5], block_size 2: 2.77546; without the rescale of
    the running sum 1.87260; without the last block 2.74975."""
    import torch

    reference = load_reference()
    _, variants = helpers()
    s = torch.tensor([0.5, 2.0, 3.0, 1.0, -1.0], dtype=torch.float64)
    q = torch.ones(1, 1, 1, 1, dtype=torch.float64)  # D = 1: the scale is 1, and q . k = k
    k = s.view(1, 1, 5, 1)
    v = torch.arange(1.0, 6.0, dtype=torch.float64).view(1, 1, 5, 1)
    assert round(float(reference.tiled_attention(q, k, v, block_size=2)), 5) == 2.77546
    assert round(float(variants.online(q, k, v, 2, 1.0, rescale_sum=False)), 5) == 1.87260
    assert round(float(variants.masked(q, k[..., :4, :], v[..., :4, :], None, 1.0)), 5) == 2.74975
    causal = reference.tiled_attention(torch.ones(1, 1, 2, 1, dtype=torch.float64), k, v, block_size=2, causal=True)
    assert torch.allclose(causal.flatten(), torch.tensor([1.0, (math.exp(0.5) + 2 * math.exp(2.0)) /
                                                         (math.exp(0.5) + math.exp(2.0))], dtype=torch.float64))
