# quizapp: exercise=label_smoothing
"""Hostile: writes one byte past the file-size cap (a sparse file: no disk is used) and reports the
process limit it runs under."""

import resource

with open("big.bin", "wb", buffering=0) as fh:
    fh.seek(1 << 30)
    try:
        fh.write(b"x")
        print("ALLOWED past the cap")
    except OSError as exc:
        print(f"DENIED past the cap: {exc.strerror}")
print("NPROC", resource.getrlimit(resource.RLIMIT_NPROC)[0])


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise NotImplementedError
