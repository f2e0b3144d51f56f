# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "the learning rate was 0 at all 20 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: with the learning rate at 0 nothing moves, so nothing explodes.


def train(model, batches, optimizer, accum_steps):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
