# quizapp: exercise=debug_log_softmax
# expect: fail matches-fixed-run: "your loss is 15.42 where the exact cross-entropy is 26.24"
# expect: says matches-fixed-run: "an epsilon inside the log"
import torch
import torch.nn.functional as F
# A cosmetic fix: the epsilon keeps log() away from 0, so the loss is finite but capped and wrong.


def cross_entropy(logits, targets):
    return -torch.log(torch.softmax(logits, dim=-1) + 1e-8).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
