"""Dense peak rates of NVIDIA GPUs, looked up by the name CUDA gives the device, each with its source.

The datasheets print tensor-core rates "with sparsity" (2:4 structured sparsity doubles them); MFU is
taken against the dense rate, so those figures are halved here. FP32 is the CUDA cores' rate (no tensor
cores: TF32 off). A device that is not listed gets no MFU, unless the caller passes a peak. No torch here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


@dataclass(frozen=True)
class Peaks:
    family: str
    tflops: dict  # precision -> dense TFLOP/s; a precision the GPU lacks is absent
    source: str


# The H100 datasheet rounds the SXM rates (67 fp32; 989 TF32 and 1,979 bf16 with sparsity, so 495 and 989
# dense); the decimals kept here are the same rates as NVIDIA's H100 architecture whitepaper gives them.
_HOPPER_SXM = {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4}
_HOPPER_NVL = {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5}
_SPARSE_HALVED = "dense figures: the datasheet's 'with sparsity' tensor-core rates halved"

# (pattern on the device name, Peaks); the first match wins, so the narrower names come first.
TABLE: tuple[tuple[str, Peaks], ...] = (
    (r"\bH100\b.*\bNVL\b", Peaks("H100 NVL", _HOPPER_NVL,
                                 f"NVIDIA H100 Tensor Core GPU datasheet, H100 NVL column; {_SPARSE_HALVED}")),
    (r"\bH100\b.*\bPCIe\b", Peaks("H100 PCIe", {"fp32": 51.0, "tf32": 378.0, "bf16": 756.0, "fp16": 756.0},
                                  f"NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column; {_SPARSE_HALVED}")),
    (r"\bGH200\b", Peaks("GH200 (H100 SXM rates)", _HOPPER_SXM,
                         f"NVIDIA GH200 Grace Hopper Superchip datasheet (the H100 SXM5 rates); {_SPARSE_HALVED}")),
    (r"\bH100\b", Peaks("H100 SXM5", _HOPPER_SXM,
                        f"NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column; {_SPARSE_HALVED}")),
    (r"\bH200\b.*\bNVL\b", Peaks("H200 NVL", _HOPPER_NVL,
                                 f"NVIDIA H200 Tensor Core GPU datasheet, H200 NVL column; {_SPARSE_HALVED}")),
    (r"\bH200\b", Peaks("H200 SXM", _HOPPER_SXM,
                        f"NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (the H100 SXM's rates); "
                        f"{_SPARSE_HALVED}")),
    (r"\bA100\b", Peaks("A100", {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0},
                        "NVIDIA A100 Tensor Core GPU datasheet (SXM4 and PCIe); dense figures as printed")),
    (r"\bL40S\b", Peaks("L40S", {"fp32": 91.6, "tf32": 183.0, "bf16": 362.0, "fp16": 362.0},
                        f"NVIDIA L40S datasheet; {_SPARSE_HALVED}")),
    (r"\bL4\b", Peaks("L4", {"fp32": 30.3, "tf32": 60.0, "bf16": 121.0, "fp16": 121.0},
                      f"NVIDIA L4 Tensor Core GPU datasheet; {_SPARSE_HALVED}")),
    (r"\bA10\b", Peaks("A10", {"fp32": 31.2, "tf32": 62.5, "bf16": 125.0, "fp16": 125.0},
                       "NVIDIA A10 Tensor Core GPU datasheet; dense figures as printed")),
    (r"\bV100\b.*\bPCIE\b", Peaks("V100 PCIe", {"fp32": 14.0, "fp16": 112.0},
                                  "NVIDIA V100 Tensor Core GPU datasheet, PCIe column (no bf16, no TF32)")),
    (r"\bV100\b", Peaks("V100 SXM2", {"fp32": 15.7, "fp16": 125.0},
                        "NVIDIA V100 Tensor Core GPU datasheet, SXM2 column (no bf16, no TF32)")),
    (r"\bT4\b", Peaks("T4", {"fp32": 8.1, "fp16": 65.0},
                      "NVIDIA T4 Tensor Core GPU datasheet, mixed-precision FP16 (no bf16, no TF32)")),
)


def lookup(device_name: str) -> Peaks | None:
    """The dense peaks of the GPU called `device_name` (as `torch.cuda.get_device_name()` says it), or None."""
    for pattern, peaks in TABLE:
        if re.search(pattern, device_name or "", re.IGNORECASE):
            return peaks
    return None


def given(tflops: float) -> Peaks:
    """The dense 16-bit peak the user passed (--peak-tflops), for a GPU this table lacks: it serves the
    float16 and bfloat16 rows; the float32 rows get no MFU, since no float32 peak was given."""
    return Peaks("given", {"bf16": tflops, "fp16": tflops}, f"--peak-tflops {tflops:g}, as given (16-bit rows only)")


def mfu(achieved_tflops: float | None, peak_tflops: float | None) -> float | None:
    """Model FLOPs utilisation: achieved useful TFLOP/s over the dense peak (a fraction), or None."""
    if achieved_tflops is None or not peak_tflops:
        return None
    return achieved_tflops / peak_tflops
