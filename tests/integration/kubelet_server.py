"""A kubelet's pod-resources API for the tests: a real gRPC server (grpcio)
on a Unix socket, serving v1.PodResourcesLister/List from the messages of
kubelet/api.proto, compiled here with grpcio-tools. The pods it lists are
what the test sets; each call is counted."""
import importlib
import pathlib
import sys
import tempfile
import threading
from concurrent import futures

import grpc
from grpc_tools import protoc

PROTO_DIR = pathlib.Path(__file__).parent / "kubelet"


def compiled():
    """The generated modules (api_pb2, api_pb2_grpc), compiled once a process."""
    if "api_pb2_grpc" in sys.modules:
        return sys.modules["api_pb2"], sys.modules["api_pb2_grpc"]
    out = tempfile.mkdtemp(prefix="tv-kubelet-proto-")
    rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}",
                      f"--grpc_python_out={out}", str(PROTO_DIR / "api.proto")])
    assert rc == 0, "protoc could not compile kubelet/api.proto"
    sys.path.insert(0, out)
    return importlib.import_module("api_pb2"), importlib.import_module("api_pb2_grpc")


class Kubelet:
    """pods: [(namespace, name, [(container, {resource: [device ids]})])]."""

    def __init__(self, socket_path, pods=()):
        self.socket_path = str(socket_path)
        self.pods = list(pods)
        self.calls = 0
        self.status = None  # a grpc.StatusCode to answer instead, with its details
        self.details = ""
        self._lock = threading.Lock()
        pb2, pb2_grpc = compiled()
        kubelet = self

        class Lister(pb2_grpc.PodResourcesListerServicer):
            def List(self, request, context):
                with kubelet._lock:
                    kubelet.calls += 1
                    if kubelet.status is not None:
                        context.abort(kubelet.status, kubelet.details)
                    answer = pb2.ListPodResourcesResponse()
                    for namespace, name, containers in kubelet.pods:
                        pod = answer.pod_resources.add(name=name, namespace=namespace)
                        pod.cpu_ids.extend([0, 1])
                        for cname, devices in containers:
                            c = pod.containers.add(name=cname)
                            c.cpu_ids.extend([2, 3])
                            c.memory.add(memory_type="memory", size=1 << 30)
                            for resource, ids in devices.items():
                                d = c.devices.add(resource_name=resource, device_ids=ids)
                                d.topology.nodes.add(ID=0)
                    return answer

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        pb2_grpc.add_PodResourcesListerServicer_to_server(Lister(), self.server)
        self.server.add_insecure_port(f"unix:{self.socket_path}")

    def set_pods(self, pods):
        with self._lock:
            self.pods = list(pods)

    def __enter__(self):
        self.server.start()
        return self

    def __exit__(self, *exc):
        self.server.stop(None)
