# quizapp: exercise=debug_next_token_shift
import torch.nn.functional as F

# A near miss: the targets shifted twice (labels pre-shifted, then shifted again): next-next-token prediction.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits[:, :-2].reshape(-1, VOCAB), tokens[:, 2:].reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
