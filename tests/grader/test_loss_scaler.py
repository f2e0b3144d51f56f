"""loss_scaler: the reference's scale stops where torch's GradScaler stops, at the top of float32 (its
grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

from gradeutil import EXERCISES

FOLDER = EXERCISES / "loss_scaler"


def test_reference_matches_gradscaler_at_the_float32_top():
    """From 2**126 with growth 2, GradScaler's float32 scale stops at 2**127; so does the reference."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("loss_scaler_reference", FOLDER / "reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    mine = reference.DynamicLossScaler(init_scale=2.0**126, growth_interval=1)
    torch_scaler = torch.amp.GradScaler("cpu", init_scale=2.0**126, growth_interval=1)
    p = torch.ones(2, requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=0.1)
    mine_scales, torch_scales = [], []
    for scaler, out in ((mine, mine_scales), (torch_scaler, torch_scales)):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            loss = (p * 0.0).sum()
            if scaler is mine:
                scaler.scale_loss(loss).backward()
                assert scaler.step(optimizer) is True
                out.append(scaler.scale)
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                out.append(scaler.get_scale())
    assert mine_scales == torch_scales == [2.0**127] * 3
