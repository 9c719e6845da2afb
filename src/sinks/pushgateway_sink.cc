#include "sinks/pushgateway_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/thread.h"
#include "sinks/http_client.h"
#include "store/job_end_event.h"

namespace tv {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr std::chrono::seconds kFirstBackoff{1};
constexpr std::chrono::seconds kMaxBackoff{60};

bool Plain(std::string_view v) {
  if (v.empty()) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

std::string Base64Url(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out.push_back(kAlphabet[(n >> s) & 63]);
  }
  if (size_t rest = in.size() - i; rest > 0) {
    uint32_t n = uint8_t(in[i]) << 16;
    if (rest == 2) n |= uint8_t(in[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out.empty() ? "=" : out;  // the Pushgateway's form of an empty value
}

std::string Segment(std::string_view label, std::string_view value) {
  if (Plain(value)) return fmt::format("/{}/{}", label, value);
  std::string valid;  // the Pushgateway refuses a label value that is not UTF-8
  AppendValidUtf8(value, &valid);
  return fmt::format("/{}@base64/{}", label, Base64Url(valid));
}

}  // namespace

std::string PushgatewayGroupPath(std::string_view job, std::string_view instance,
                                 std::string_view run) {
  std::string path = "/metrics" + Segment("job", job) + Segment("instance", instance);
  if (!run.empty()) path += Segment("run", run);
  return path;
}

std::string PushgatewayGroupPath(const PromLabels& labels) {
  if (labels.job.empty()) return PushgatewayGroupPath(labels.run, labels.host);
  return PushgatewayGroupPath(labels.job, labels.host, labels.run);
}

PushgatewaySink::PushgatewaySink(HttpUrl url, PromLabels labels, bool delete_at_end)
    : url_(std::move(url)), labels_(std::move(labels)), delete_at_end_(delete_at_end) {
  group_path_ = url_.path + PushgatewayGroupPath(labels_);
  thread_ = StartThread("tv-push", "nothing more is pushed", [this] { Loop(); });
}

PushgatewaySink::~PushgatewaySink() { OnClose(); }

void PushgatewaySink::OnRow(const Row& row) {
  std::string body = RenderPrometheus(row, labels_, PromFormat::kText004);
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = std::move(body);
  cv_.notify_one();
}

void PushgatewaySink::OnEvent(const Event& event) {
  if (event.type != EventType::kEnd) return;
  if (auto code = EndEventFromFields(event.fields).exit_code) exit_code_ = code;
}

void PushgatewaySink::OnClose() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    closing_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void PushgatewaySink::Fail(const std::string& kind, const std::string& message) {
  failing_ = true;
  if (!failed_kinds_.insert(kind).second) return;
  fmt::print(stderr,
             "trainvitals: pushgateway {}: {} (retrying with backoff; monitoring goes on)\n",
             url_.host, message);
}

bool PushgatewaySink::Send(const char* method, const std::string* body) {
  try {
    return TrySend(method, body);
  } catch (...) {
    Fail("error", fmt::format("{} failed: {}", method, CurrentExceptionText()));
    return false;
  }
}

bool PushgatewaySink::TrySend(const char* method, const std::string* body) {
  HttpCall call;
  call.method = body != nullptr ? "PUT" : "DELETE";
  call.host = url_.host;
  call.port = url_.port;
  call.path = group_path_;
  if (body != nullptr) call.body = *body;
  call.content_type = std::string(kPromTextContentType);
  HttpReply res = HttpRequest(call);
  if (res.status == 0) {
    Fail("unreachable", fmt::format("{} failed: {}", method, res.error));
    return false;
  }
  if (res.status / 100 != 2) {
    std::string reply = res.body.substr(0, 200);
    while (!reply.empty() && reply.back() == '\n') reply.pop_back();
    Fail(fmt::format("status {}", res.status),
         fmt::format("{} {} answered {}: {}", method, group_path_, res.status, reply));
    return false;
  }
  if (failing_) {
    fmt::print(stderr, "trainvitals: pushgateway {}: pushing again\n", url_.host);
    failing_ = false;
  }
  return true;
}

void PushgatewaySink::Loop() {
  auto backoff = std::chrono::duration_cast<SteadyClock::duration>(kFirstBackoff);
  SteadyClock::time_point next_try = SteadyClock::now();
  std::string last;  // the newest body, for the push at the end
  std::unique_lock<std::mutex> lock(mu_);
  while (!closing_) {
    if (!pending_) {
      cv_.wait(lock);
      continue;
    }
    if (SteadyClock::now() < next_try) {
      cv_.wait_until(lock, next_try);
      continue;
    }
    last = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    bool ok = Send("PUT", &last);
    lock.lock();
    if (ok) {
      backoff = std::chrono::duration_cast<SteadyClock::duration>(kFirstBackoff);
    } else {
      next_try = SteadyClock::now() + backoff;
      backoff = std::min<SteadyClock::duration>(backoff * 2, kMaxBackoff);
    }
  }
  if (pending_) last = std::move(*pending_);
  lock.unlock();
  // One last attempt each, whatever the backoff says: the run is over.
  if (delete_at_end_ && exit_code_ == 0) {
    Send("DELETE", nullptr);
  } else if (!last.empty()) {
    Send("PUT", &last);
  }
}

}  // namespace tv
