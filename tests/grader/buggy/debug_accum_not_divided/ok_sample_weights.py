# quizapp: exercise=debug_accum_not_divided
# expect: pass
import torch.nn.functional as F

# A right fix written another way: each micro-batch's summed loss divided by the number of samples
# in its group, so the group's gradients add up to the mean over all of them.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        start = i - i % accum_steps
        samples = sum(len(xb) for xb, _ in batches[start:start + accum_steps])
        loss = F.mse_loss(model(x), y, reduction="sum") / samples
        loss.backward()
        step_loss += loss.item()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
