"""The PyTorch profiler takes CUPTI before the job touches CUDA, inside `gpudoctor record`: which
of the two keeps CUPTI? Prints one JSON line with the GPU events the profiler saw."""
import json

import torch
from torch.profiler import ProfilerActivity, profile

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    x = torch.randn(2048, 2048, device="cuda")
    for _ in range(10):
        x = torch.tanh(x @ x)
    torch.cuda.synchronize()
gpu = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print(json.dumps({"profiler_gpu_events": len(gpu)}))
