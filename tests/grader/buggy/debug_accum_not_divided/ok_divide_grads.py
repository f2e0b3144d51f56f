# quizapp: exercise=debug_accum_not_divided
# expect: pass
import torch.nn.functional as F

# A right fix written another way: the accumulated gradients divided by accum_steps before the step.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            for p in model.parameters():
                p.grad /= accum_steps
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
