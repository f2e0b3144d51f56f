"""`quizapp bench`: the learner's mixed-precision loop timed against float32 on a GPU.

This package runs in a child process of its own (`python -m quizapp.bench`): it imports torch, which
the command line never does (see pyproject.toml's import contracts). `quizapp.commands.bench` starts
it and passes its output and exit code on.

  stats    the statistics of a timing: median, standard error, "repeat until it is under 1%"
  flops    FLOP counting: the bench model's matmuls, counted by formula and by torch's FlopCounterMode
  peaks    dense datasheet peaks by GPU name, each with its source, and MFU
  table    the report: a table and bars at a glance (plain text)
  timing   clocks: CUDA events or the host's clock, the L2 flush, the loader that marks each step
  model    the bench model and its batch, sized to the GPU's memory
  loops    the float32 baseline and the no-sync loop the learner's is compared with
  main     the command: arguments, the runs, the report, the exit code

stats, peaks, table and flops import no torch (flops loads torch's FLOP counter only when asked).
"""
