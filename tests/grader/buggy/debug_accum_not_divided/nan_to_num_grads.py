# quizapp: exercise=debug_accum_not_divided
# expect: fail loss-does-not-explode
# expect: fail honest-fix: "nan_to_num was called 80 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: non-finite gradients replaced before the step; the oversized ones stay.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            for p in model.parameters():
                p.grad.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
