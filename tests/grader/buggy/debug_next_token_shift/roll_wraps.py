# quizapp: exercise=debug_next_token_shift
import torch
import torch.nn.functional as F

# A near miss: torch.roll shifts the targets but wraps the first token round to the last position.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), torch.roll(tokens, -1, dims=1).reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
