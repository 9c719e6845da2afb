"""Which GPU a framework's device number is: its UUID, as the CUDA driver reports it.

A rank started with its own CUDA_VISIBLE_DEVICES calls its GPU device 0, whichever
GPU that is; the allocator figures carry the device's UUID so the sampler puts
them on the right GPU (docs/markers.md). The CUDA driver API (libcuda, loaded by
every framework that uses CUDA) numbers devices exactly as the frameworks do, so
asking it needs no framework and no NVML. Each device is asked once.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Optional

_uuids: Dict[int, Optional[str]] = {}
_driver = None  # ctypes library; False once it proved missing


def format_uuid(raw: bytes) -> str:
    """16 bytes as NVML writes a GPU's UUID: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx."""
    h = raw.hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def normal_uuid(text) -> Optional[str]:
    """A framework's own UUID text ("GPU-...", "MIG-..." or bare hex) with NVML's prefix."""
    if text is None:
        return None
    s = str(text).strip()
    if not s:
        return None
    return s if s[:4].upper() in ("GPU-", "MIG-") else f"GPU-{s}"


def _library():
    global _driver
    if _driver is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            _driver = lib if lib.cuInit(0) == 0 else False
        except (OSError, AttributeError):
            _driver = False
    return _driver or None


def cuda_uuid(device: int) -> Optional[str]:
    """The UUID of CUDA device number `device` in this process; None when unknown."""
    if device in _uuids:
        return _uuids[device]
    uuid = None
    try:
        lib = _library()
        if lib is not None:
            handle = ctypes.c_int()
            raw = (ctypes.c_ubyte * 16)()
            if lib.cuDeviceGet(ctypes.byref(handle), int(device)) == 0:
                # _v2 (CUDA 11.4+) gives a MIG slice's own UUID; the first, its GPU's.
                for name in ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"):
                    get = getattr(lib, name, None)
                    if get is not None and get(raw, handle) == 0:
                        uuid = format_uuid(bytes(raw))
                        break
    except Exception:  # an odd driver: the figures go by device number instead
        uuid = None
    _uuids[device] = uuid
    return uuid
