# quizapp: exercise=debug_no_shuffle
# expect: fail matches-fixed-run: "all 2 epochs visited the samples in the same order"
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A near miss: the classes interleaved by hand, the same order every epoch.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    labels = dataset.tensors[1].cpu()
    by_class = [torch.nonzero(labels == c).flatten() for c in labels.unique().tolist()]
    order = torch.stack(by_class, dim=1).flatten().tolist()  # 0, 1, 2, 3, 0, 1, 2, 3, ...
    loader = DataLoader(torch.utils.data.Subset(dataset, order), batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
