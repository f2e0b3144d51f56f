# quizapp: exercise=debug_log_softmax
# expect: fail matches-fixed-run: "your loss is 19.48 where the exact cross-entropy is 26.24"
import torch
import torch.nn.functional as F
# A cosmetic fix: probabilities clamped away from 0 before the log.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1).clamp(min=1e-12)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
