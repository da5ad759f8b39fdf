#!/usr/bin/env python3
"""The anchor a GPU user would pick for Marble's live chain: the same three filters written in
PyTorch on CUDA — gaussian blur (sigma 2, separable, edge-replicated), sobel gradient magnitude, sepia
colour matrix — over RGBA8 frames. Per size it prints frames/s with the frame resident on the GPU and
with a uint8 upload and download every frame (pinned host memory, as a careful user would).

Usage: torch_chain.py [WxH ...]   (default 1280x720 1920x1080 3840x2160); exits 77 without CUDA."""
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch_chain: PyTorch is not installed", file=sys.stderr)
    sys.exit(77)


def gaussian_taps(sigma: float) -> torch.Tensor:
    radius = int(3 * sigma + 0.5)
    x = torch.arange(-radius, radius + 1, dtype=torch.float32)
    taps = torch.exp(-(x * x) / (2 * sigma * sigma))
    return taps / taps.sum()


class Chain:
    def __init__(self, device):
        self.taps = gaussian_taps(2.0).to(device)
        gx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device=device)
        self.gx = gx.view(1, 1, 3, 3).repeat(3, 1, 1, 1)
        self.gy = gx.t().contiguous().view(1, 1, 3, 3).repeat(3, 1, 1, 1)
        self.sepia = torch.tensor([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]], device=device)

    def __call__(self, rgba: torch.Tensor) -> torch.Tensor:
        """rgba: H x W x 4 uint8 on the device; returns H x W x 4 uint8."""
        image = rgba[..., :3].permute(2, 0, 1).unsqueeze(0).float() * (1.0 / 255.0)
        r = self.taps.numel() // 2
        rows = F.conv2d(F.pad(image, (r, r, 0, 0), mode="replicate"), self.taps.view(1, 1, 1, -1).repeat(3, 1, 1, 1), groups=3)
        blurred = F.conv2d(F.pad(rows, (0, 0, r, r), mode="replicate"), self.taps.view(1, 1, -1, 1).repeat(3, 1, 1, 1), groups=3)
        padded = F.pad(blurred, (1, 1, 1, 1), mode="replicate")
        dx, dy = F.conv2d(padded, self.gx, groups=3), F.conv2d(padded, self.gy, groups=3)
        edges = torch.sqrt(dx * dx + dy * dy).clamp(0.0, 1.0)
        toned = torch.einsum("ij,bjhw->bihw", self.sepia, edges).clamp(0.0, 1.0)
        out = torch.empty_like(rgba)
        out[..., :3] = (toned[0].permute(1, 2, 0) * 255.0 + 0.5).to(torch.uint8)
        out[..., 3] = 255
        return out


def measure(step, frames: int) -> float:
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(frames):
        step()
    torch.cuda.synchronize()
    return frames / (time.perf_counter() - started)


def main() -> int:
    if not torch.cuda.is_available():
        print("torch_chain: no CUDA device", file=sys.stderr)
        return 77
    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    chain = Chain(device)
    print(f"torch_chain: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    sizes = [tuple(int(v) for v in a.split("x")) for a in sys.argv[1:]] or [(1280, 720), (1920, 1080), (3840, 2160)]
    for width, height in sizes:
        host = torch.randint(0, 256, (height, width, 4), dtype=torch.uint8).pin_memory()
        back = torch.empty_like(host).pin_memory()
        resident = host.to(device)
        frames = max(60, int(3e8 // (width * height)))
        fps_resident = measure(lambda: chain(resident), frames)
        fps_transfer = measure(lambda: back.copy_(chain(host.to(device, non_blocking=True)), non_blocking=True), frames)
        print(f"torch_chain {width}x{height}: {fps_resident:.0f} fps resident, {fps_transfer:.0f} fps with upload+download")
    return 0


if __name__ == "__main__":
    sys.exit(main())
