# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "16 forward passes where the fixed script runs 160"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: train on the first 2 steps' micro-batches only, before the loss explodes.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches[:2 * accum_steps]):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
