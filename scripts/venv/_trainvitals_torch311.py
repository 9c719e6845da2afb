"""Upstream PyTorch's fix of one dataclass for Python 3.11, for Debian's torch 1.13.

torch 1.13 predates Python 3.11, whose dataclasses refuse a mutable default:
torch/distributed/_shard/sharded_tensor/metadata.py declares
`tensor_properties: TensorProperties = field(default=TensorProperties())`, so
importing it (as every LightningModule() does) raises ValueError. PyTorch 2.0
declares `field(default_factory=TensorProperties)`; this import hook compiles
that one module with the same one-line change. Installed by scripts/deps.sh
into build/venv (a .pth line imports it at start-up), only for a torch older
than 2.0 under Python 3.11 or later; it touches no other module.
"""
import importlib.abc
import importlib.machinery
import sys

_MODULE = "torch.distributed._shard.sharded_tensor.metadata"
_OLD = b"field(default=TensorProperties())"
_NEW = b"field(default_factory=TensorProperties)"


class _Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        source = self.get_data(self.path).replace(_OLD, _NEW)
        return compile(source, self.path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            spec.loader = _Loader(name, spec.origin)
        return spec


if sys.version_info >= (3, 11):
    sys.meta_path.insert(0, _Finder())
