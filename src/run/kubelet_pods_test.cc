#include "run/kubelet_pods.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "core/sample.h"
#include "sinks/grpc_client.h"
#include "sinks/proto_wire.h"

namespace tv {
namespace {

using wire::AppendBytesField;

std::string Container(std::string_view name, std::vector<std::string> ids) {
  std::string devices;
  AppendBytesField(1, "nvidia.com/gpu", &devices);
  for (const std::string& id : ids) AppendBytesField(2, id, &devices);
  std::string c;
  AppendBytesField(1, name, &c);
  if (!ids.empty()) AppendBytesField(2, devices, &c);
  wire::AppendVarint((3 << 3) | 0, &c);  // cpu_ids, a varint the reader skips
  wire::AppendVarint(7, &c);
  return c;
}

std::string Pod(std::string_view ns, std::string_view name, std::vector<std::string> containers) {
  std::string p;
  AppendBytesField(1, name, &p);
  AppendBytesField(2, ns, &p);
  for (const std::string& c : containers) AppendBytesField(3, c, &p);
  return p;
}

std::string Answer(std::vector<std::string> pods) {
  std::string a;
  for (const std::string& p : pods) AppendBytesField(1, p, &a);
  return a;
}

TEST(KubeletPods, ParsesEachContainerWithItsPodAndDevices) {
  auto pods = ParsePodResources(Answer(
      {Pod("vision", "trainer", {Container("main", {"GPU-a", "GPU-b"}), Container("log", {})}),
       Pod("kube-system", "dns", {})}));
  ASSERT_TRUE(pods);
  ASSERT_EQ(pods->size(), 3u);
  EXPECT_EQ((*pods)[0].namespace_name, "vision");
  EXPECT_EQ((*pods)[0].pod, "trainer");
  EXPECT_EQ((*pods)[0].container, "main");
  EXPECT_EQ((*pods)[0].devices, (std::vector<std::string>{"GPU-a", "GPU-b"}));
  EXPECT_EQ((*pods)[1].container, "log");
  EXPECT_TRUE((*pods)[1].devices.empty());
  EXPECT_EQ((*pods)[2].pod, "dns");  // listed without containers
  EXPECT_TRUE(ParsePodResources("")->empty());
}

TEST(KubeletPods, RefusesAMalformedAnswer) {
  std::string answer = Answer({Pod("ns", "p", {Container("c", {"GPU-a"})})});
  EXPECT_FALSE(ParsePodResources(answer.substr(0, answer.size() - 3)));
  EXPECT_FALSE(ParsePodResources("\x0b"));                      // a group's start
  EXPECT_FALSE(ParsePodResources("\x0a\xff\xff\xff\xff\x0f"));  // longer than the message
}

std::vector<PodContainer> Cluster() {
  return {{"trainer", "vision", "main", {"GPU-a"}},
          {"trainer", "vision", "sidecar", {}},
          {"llm", "nlp", "worker", {"GPU-b", "GPU-c"}},
          {"shared-1", "lab", "nb", {"GPU-d::0"}},
          {"shared-2", "lab", "nb", {"GPU-d::1"}},
          {"web", "shop", "app", {}},
          {"web", "blog", "app", {}}};
}

JobIdentity Id(std::string pod = "") {
  JobIdentity id;
  id.kind = "kubernetes";
  id.pod = std::move(pod);
  return id;
}

TEST(KubeletPods, AJobIsTheContainerHoldingItsGpus) {
  auto m = MatchPod(Id("node-7"), {"GPU-a"}, Cluster());  // host network: the node's name
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pod, "trainer");
  EXPECT_EQ(m->namespace_name, "vision");
  EXPECT_EQ(m->container, "main");
  m = MatchPod(Id(), {"GPU-c", "GPU-b"}, Cluster());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->container, "worker");
}

TEST(KubeletPods, ASharedGpuIsToldApartByThePodsName) {
  EXPECT_FALSE(MatchPod(Id(), {"GPU-d"}, Cluster()));
  auto m = MatchPod(Id("shared-2"), {"GPU-d"}, Cluster());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pod, "shared-2");
  EXPECT_EQ(m->container, "nb");
}

TEST(KubeletPods, WithoutGpusThePodsNameTellsWhenOneNamespaceHasIt) {
  auto m = MatchPod(Id("trainer"), {}, Cluster());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->namespace_name, "vision");
  EXPECT_EQ(m->container, "");                       // two containers: which one is not known
  EXPECT_FALSE(MatchPod(Id("web"), {}, Cluster()));  // in two namespaces
  EXPECT_FALSE(MatchPod(Id("gone"), {"GPU-z"}, Cluster()));
}

// A socket that is not a kubelet: the call says what went wrong.
TEST(GrpcUnixCall, SaysWhatWentWrong) {
  std::string path =
      std::filesystem::temp_directory_path() / ("tv-grpc-" + std::to_string(::getpid()) + ".sock");
  GrpcReply none = GrpcUnixCall({.socket_path = path, .method = "/v1.X/List", .timeout_s = 1});
  EXPECT_EQ(none.status, -1);
  EXPECT_NE(none.error.find("cannot connect to " + path), std::string::npos) << none.error;

  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ::unlink(path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  std::thread server([&] {
    // The first connection is answered in HTTP/1.1, the second never.
    int fd = ::accept(listener, nullptr, nullptr);
    char buffer[256];
    EXPECT_GT(::read(fd, buffer, sizeof buffer), 0);
    const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    EXPECT_GT(::write(fd, reply, sizeof reply - 1), 0);
    ::close(fd);
    fd = ::accept(listener, nullptr, nullptr);
    while (::read(fd, buffer, sizeof buffer) > 0) {
    }
    ::close(fd);
  });
  GrpcReply http1 = GrpcUnixCall({.socket_path = path, .method = "/v1.X/List", .timeout_s = 2});
  EXPECT_EQ(http1.status, -1);
  EXPECT_NE(http1.error.find("not HTTP/2"), std::string::npos) << http1.error;
  GrpcReply silent = GrpcUnixCall({.socket_path = path, .method = "/v1.X/List", .timeout_s = 0.3});
  EXPECT_EQ(silent.status, -1);
  EXPECT_NE(silent.error.find("no answer from " + path + " in time"), std::string::npos)
      << silent.error;
  server.join();
  ::close(listener);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace tv
