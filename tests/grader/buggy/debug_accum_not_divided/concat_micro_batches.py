# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "20 forward passes ran on 128 samples where the fixed script runs micro-batches of [16]"
# expect: says honest-fix: "joining the micro-batches"
import torch
import torch.nn.functional as F

# A cosmetic fix: the 8 micro-batches joined into one batch of 128, so there is nothing to accumulate.


def train(model, batches, optimizer, accum_steps):
    losses = []
    for i in range(0, len(batches), accum_steps):
        group = batches[i:i + accum_steps]
        x = torch.cat([x for x, _ in group])
        y = torch.cat([y for _, y in group])
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
