"""moe_routing: the facts its statement and scenarios rest on, checked against the torch in use (its grades
and buggy solutions: test_mutants.py). torch.topk's order on ties is the CPU's; the tie cases must keep
telling torch.topk from a sort, and the worked example's numbers must be what the reference computes."""

from __future__ import annotations

import importlib.util

import pytest
import torch
import torch.nn.functional as F
import yaml
from gradeutil import EXERCISES
from torch import nn

from quizapp.checking.harness import sibling_module

EXERCISE = EXERCISES / "moe_routing"
scn = sibling_module(str(EXERCISE / "checks.py"), "scenarios")


def statement() -> str:
    """The statement with its line breaks and indents as single spaces."""
    return " ".join(yaml.safe_load((EXERCISE / "exercise.yaml").read_text(encoding="utf-8"))["statement"].split())


def test_topk_breaks_ties_as_the_statement_says():
    assert torch.topk(torch.zeros(1, 5), 2).indices.tolist() == [[2, 4]]
    assert torch.topk(torch.zeros(1, 8), 3).indices.tolist() == [[6, 5, 4]]
    assert torch.zeros(1, 5).argsort(dim=-1, descending=True)[:, :2].tolist() == [[0, 1]]
    assert "`torch.topk(torch.zeros(1, 5), 2)` returns experts 2 and 4" in statement()


def sorted_choice(chosen: torch.Tensor) -> torch.Tensor:
    return chosen.sort(dim=-1).values


@pytest.mark.parametrize("case", scn.TIES, ids=scn.describe)
def test_every_tie_case_tells_topk_from_a_sort(case):
    inputs = scn.build(case, "cpu")
    probs, chosen = scn.routing(inputs.x, inputs.router, case.k)
    by_sort = probs.argsort(dim=-1, descending=True)[:, : case.k]
    assert (sorted_choice(by_sort) != sorted_choice(chosen)).any(-1).sum() >= 1


def test_a_bfloat16_case_changes_a_choice_under_a_bfloat16_softmax():
    case = next(c for c in scn.BF16 if c.ties == "bf16")
    inputs = scn.build(case, "cpu")
    _, chosen = scn.routing(inputs.x, inputs.router, case.k)
    with torch.no_grad():
        low = torch.topk(torch.softmax(inputs.router(inputs.x), dim=-1), case.k).indices
    assert (sorted_choice(low) != sorted_choice(chosen)).any(-1).sum() >= 1


def test_the_worked_example_is_what_the_reference_computes():
    spec = importlib.util.spec_from_file_location("moe_reference", EXERCISE / "reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    logits = torch.tensor([[2.0, 1.0, 0.1, 1.5], [0.0, 0.5, 1.0, 0.2], [1.2, 0.3, 0.9, -0.4]])
    router = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        router.weight.copy_(torch.eye(4))
    experts = nn.ModuleList(nn.Identity() for _ in range(4))
    y, aux = reference.moe_forward(logits, router, experts, k=2)
    probs = F.softmax(logits, dim=-1)
    assert torch.topk(probs, 2).indices.tolist() == [[0, 3], [2, 1], [0, 2]]
    text = statement()
    assert f"aux_loss = 4 · Σ f_i P_i = {aux.item():.3f}`" in text
    gate = (probs[0, 0] / (probs[0, 0] + probs[0, 3])).item()
    assert f"{probs[0, 0].item():.4f} / {(probs[0, 0] + probs[0, 3]).item():.4f} = {gate:.4f}" in text
    f = torch.tensor([2, 1, 2, 1]) / 3
    top1 = F.one_hot(probs.argmax(-1), 4).float().mean(0)
    assert f"divided by k: {aux.item() / 2:.3f}; with top-1 counts: {4 * (top1 * probs.mean(0)).sum().item():.3f}" in text
    assert torch.allclose(aux, 4 * (f * probs.mean(0)).sum())
