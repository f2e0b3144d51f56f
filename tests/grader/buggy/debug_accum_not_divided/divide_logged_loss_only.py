# quizapp: exercise=debug_accum_not_divided
# expect: fail loss-does-not-explode
# expect: fail matches-fixed-run: "your gradient's norm is 8 times the fixed script's"
import torch.nn.functional as F

# A near miss: the division applied to the logged loss only; backward still sees the full one.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        loss = loss / accum_steps
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
