# quizapp: exercise=debug_accum_not_divided
# expect: fail matches-fixed-run: "your gradient's norm is 2.74 times the fixed script's"
import torch.nn.functional as F

# A near miss (the question of karpathy/nanoGPT#605): the loss divided by the number of
# micro-batches so far, 1, 2, ..., 8, which weighs the early micro-batches more and sums to 2.7x.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        (loss / (i % accum_steps + 1)).backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
