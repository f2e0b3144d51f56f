# quizapp: exercise=debug_next_token_shift
# expect: pass
import torch.nn.functional as F

# A right fix written another way: labels shifted left and padded with -100, which cross_entropy ignores.

VOCAB = 16


def lm_loss(logits, tokens):
    labels = F.pad(tokens[:, 1:], (0, 1), value=-100)
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
