# quizapp: exercise=debug_no_shuffle
# expect: fail honest-fix: "2 forward passes where the fixed script runs 48" "batch 0 held 192 samples"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A cosmetic fix: one batch of the whole dataset holds every class, still unshuffled.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    loader = DataLoader(dataset, batch_size=len(dataset))
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
