"""optimizer.step(closure): the grader runs the closure when step() is entered, so what it does is
logged, and its gradients read, before the step, and torch's optimizer does not run it again."""

from __future__ import annotations

import torch

from quizapp.checking import instrument
from quizapp.checking.instrument import LOG


def make():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer


def test_the_closure_runs_once_before_the_step_is_logged_and_its_loss_is_returned():
    model, optimizer = make()
    seen = []
    LOG.reset("cpu")
    instrument.watch_optimizer(optimizer, before_step=lambda: seen.append(model.weight.grad.clone()))
    calls = []
    x = torch.ones(2, 3)

    def closure():
        calls.append(1)
        LOG.add("inside-closure")
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss

    expected = model(x).pow(2).mean().item()
    returned = optimizer.step(closure)
    assert calls == [1]
    assert [e.kind for e in LOG.events] == ["inside-closure", "opt.step"]
    assert returned.item() == expected
    # The step used the closure's gradient: the one before_step saw.
    assert len(seen) == 1 and seen[0].abs().sum().item() > 0


def test_a_keyword_closure_and_a_closure_under_no_grad_both_build_their_graph():
    model, optimizer = make()
    LOG.reset("cpu")
    instrument.watch_optimizer(optimizer)
    before = model.weight.detach().clone()

    def closure():
        loss = model(torch.ones(1, 3)).sum()
        loss.backward()
        return loss

    with torch.no_grad():  # torch's optimizers enable grad for the closure: so does the grader
        optimizer.step(closure=closure)
    assert not torch.equal(before, model.weight.detach())


def test_a_step_without_closure_is_unchanged():
    model, optimizer = make()
    LOG.reset("cpu")
    instrument.watch_optimizer(optimizer)
    model(torch.ones(1, 3)).sum().backward()
    assert optimizer.step() is None
    assert [e.kind for e in LOG.events] == ["opt.step"]
