# quizapp: exercise=debug_accum_not_divided
# expect: fail loss-does-not-explode
# expect: fail honest-fix: "2 optimizer steps ran where the fixed script takes 20"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: a step whose loss has grown is skipped.


def train(model, batches, optimizer, accum_steps):
    first = None
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            first = step_loss if first is None else first
            if step_loss < 2 * first:
                optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
