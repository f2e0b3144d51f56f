# quizapp: exercise=debug_next_token_shift
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: torch.roll, then the wrapped last position dropped.

VOCAB = 16


def lm_loss(logits, tokens):
    targets = torch.roll(tokens, -1, dims=1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), targets[:, :-1].reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
