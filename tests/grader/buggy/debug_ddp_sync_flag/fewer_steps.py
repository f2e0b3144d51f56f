# quizapp: exercise=debug_ddp_sync_flag
# expect: fail ranks-agree
# expect: fail honest-fix: "4 forward passes where the fixed script runs 32" "1 optimizer step ran"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: train for one step only, so the weights have less time to drift.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, accum_steps, accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.item()
            model.require_backward_grad_sync = micro_step == accum_steps - 1
            loss.backward()
        optimizer.step()
        losses.append(loss_accum)
    return losses
