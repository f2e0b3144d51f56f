# quizapp: exercise=debug_next_token_shift
"""The fixed script: position t's logits are scored against token t + 1, not against token t.

Run it:    python debug_next_token_shift.py
Grade it:  quizapp grade debug_next_token_shift.py   (the grader calls train() on its own model and data)

A tiny causal language model (each position sees its own token and the one before it) trained
on sequences where the next token follows a fixed rule 80% of the time and is random otherwise,
so no model can push the next-token loss below about 0.99 nats. Rebuilt small from a real report:
KempnerInstitute/KempnerForge#154, "VLM captioning loss collapses to 0: labels not shifted for
next-token".
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, HIDDEN = 16, 16, 32
STEPS, BATCH, LENGTH = 50, 16, 16
FOLLOWS_RULE = 0.8  # how often the next token is rule[token]; otherwise it is drawn at random


class TinyCausalLM(nn.Module):
    """Logits for every position from its own token and the previous one: a causal window of two."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Linear(2 * DIM, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens):
        here = self.embed(tokens)                           # (batch, length, dim)
        before = F.pad(here, (0, 0, 1, 0))[:, :-1]          # the previous token's embedding, zeros at t=0
        return self.head(torch.tanh(self.mix(torch.cat([here, before], dim=-1))))


def make_batches(seed, device="cpu", steps=STEPS):
    """`steps` batches of token sequences: each next token is rule[token] with probability 0.8."""
    g = torch.Generator().manual_seed(seed)
    rule = torch.randperm(VOCAB, generator=g)
    batches = []
    for _ in range(steps):
        tokens = torch.empty(BATCH, LENGTH, dtype=torch.long)
        tokens[:, 0] = torch.randint(0, VOCAB, (BATCH,), generator=g)
        for t in range(1, LENGTH):
            random = torch.randint(0, VOCAB, (BATCH,), generator=g)
            keep = torch.rand(BATCH, generator=g) < FOLLOWS_RULE
            tokens[:, t] = torch.where(keep, rule[tokens[:, t - 1]], random)
        batches.append(tokens.to(device))
    return batches


def entropy_floor():
    """The lowest next-token loss any model can reach on this data, in nats."""
    p_rule = FOLLOWS_RULE + (1 - FOLLOWS_RULE) / VOCAB
    p_other = (1 - FOLLOWS_RULE) / VOCAB
    return -(p_rule * math.log(p_rule) + (VOCAB - 1) * p_other * math.log(p_other))


def lm_loss(logits, tokens):
    """Mean cross-entropy of predicting each next token from the positions before it."""
    # Position t has seen tokens up to t, so its target is token t + 1: drop the last position's
    # logits (nothing follows it) and the first token (nothing predicts it). Scoring position t
    # against token t asks the model to copy a token it can already see, which it learns at once.
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def train(model, batches, optimizer):
    """One optimizer step per batch; returns the loss of every step."""
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    model = TinyCausalLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = train(model, make_batches(seed=1), optimizer)
    for step in range(0, STEPS, 5):
        print(f"step {step:3d}  loss {losses[step]:.4f}")
    print(f"step {STEPS - 1:3d}  loss {losses[-1]:.4f}")
    print(f"lowest loss any model can reach on this data: {entropy_floor():.4f}")


if __name__ == "__main__":
    main()
