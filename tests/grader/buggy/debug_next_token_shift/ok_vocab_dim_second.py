# quizapp: exercise=debug_next_token_shift
# expect: pass
import torch.nn.functional as F

# A right fix written another way: cross_entropy on (batch, vocab, length) logits.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
