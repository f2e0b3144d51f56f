# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "32 optimizer steps ran where the fixed script takes 8" "drops the gradient accumulation"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: no accumulation at all: every micro-batch syncs and steps.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.item()
            loss.backward()
            optimizer.step()
        losses.append(loss_accum)
    return losses
