# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "8 forward passes where the fixed script runs 32"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: keep only the first micro-batch of each step (the one DDP does all-reduce), so the
# ranks agree; three quarters of the data are never seen.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        x, y = batches[start]
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
