#include "run/serve.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "analysis/judges.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/host.h"
#include "core/notice_event.h"
#include "core/sampler.h"
#include "core/sink_thread.h"
#include "run/job_spool.h"
#include "run/kubelet_pods.h"
#include "run/node_sessions.h"
#include "sinks/metrics_server.h"
#include "sinks/prometheus_sink.h"
#include "sources/gpu_source.h"
#include "sources/host_sources.h"
#include "sources/node_jobs.h"
#include "store/finding_record.h"

namespace tv {
namespace {

// The agent's log on stderr: what a source could not read (once), and each
// finding a job opens.
class AgentLog final : public Sink {
 public:
  void OnEvent(const Event& event) override {
    if (std::optional<Notice> n = NoticeOfEvent(event)) {
      std::fprintf(stderr, "trainvitals serve: %s: %s\n", n->source.c_str(), n->message.c_str());
    }
    FindingRecord finding;
    if (event.type == EventType::kFindingOpen && FindingFromJson(event.fields, &finding).ok()) {
      std::string job = event.fields.value("job", "");
      std::fprintf(stderr, "trainvitals serve: job %s: %s (%s)\n", job.c_str(),
                   finding.message.c_str(), finding.id.c_str());
    }
  }
};

// meta.json of a job as the node gives it (run/job_spool.h adds the job).
MetaRecord NodeMeta(const ServeOptions& options, const GpuSource* gpus) {
  utsname uts{};
  ::uname(&uts);
  MetaRecord meta;
  meta.trainvitals_version = TRAINVITALS_VERSION;
  meta.mode = "serve";
  meta.host = options.node;
  meta.kernel = std::string(uts.sysname) + " " + uts.release;
  meta.sample_hz = 1 / options.interval_s;
  meta.interval_s = options.interval_s;
  meta.cpus_online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (gpus != nullptr) {
    meta.gpus = gpus->gpus();
    meta.gpu_driver = gpus->driver();
  }
  meta.thresholds = ThresholdsJson(options.fleet.thresholds);
  meta.cost_rates = CostRatesJson(options.fleet.cost_rates);
  return meta;
}

FleetOptions FleetOf(const ServeOptions& options) {
  FleetOptions fleet = options.fleet;
  fleet.interval_s = options.interval_s;
  return fleet;
}

}  // namespace

NodeAgent::NodeAgent(ServeOptions options)
    : options_(std::move(options)), fleet_(FleetOf(options_)) {
  if (options_.node.empty()) options_.node = HostName();
  server_ = std::make_unique<MetricsServer>(options_.listen);
  Env* env = Env::Default();
  // The host as a whole: the limits of the root cgroup (none).
  std::vector<std::unique_ptr<Source>> sources = MakeHostSources(env, 1);
  PromLabels labels;
  labels.host = options_.node;
  labels.node = true;
  GpuSourceOptions gpu;
  gpu.node = true;  // every GPU of the node, numbered as the driver does
  gpu.env = env;
  std::unique_ptr<GpuSource> gpu_source = GpuSource::Create(gpu, &notices_);
  MetaRecord node_meta = NodeMeta(options_, gpu_source.get());
  if (gpu_source) {
    for (const GpuInfo& g : gpu_source->gpus()) {
      labels.gpus.push_back(PromGpuLabel{g.index, g.mig_instance, g.name});
    }
    gpus_ = gpu_source->watched();
    sources.push_back(std::move(gpu_source));
  }
  fleet_.set_gpus(node_meta.gpus);
  sources.push_back(std::make_unique<NodeJobsSource>(env, static_cast<int>(::getpid())));
  sources.push_back(std::make_unique<KubeletPodsSource>(options_.kubelet_socket));
  sources.push_back(std::make_unique<NodeSessionsSource>());
  sinks_.push_back(std::make_unique<PrometheusSink>(server_.get(), std::move(labels)));
  if (!options_.spool.empty()) {
    JobSpoolOptions spool;
    spool.dir = options_.spool;
    spool.db = options_.db.empty() ? (std::filesystem::path(options_.spool) / "runs.db").string()
                                   : options_.db;
    spool.node = std::move(node_meta);
    spool.cost_rates = options_.fleet.cost_rates;
    sinks_.push_back(std::make_unique<JobSpool>(std::move(spool)));
  }
  sinks_.push_back(std::make_unique<AgentLog>());
  std::vector<Sink*> sinks;
  for (const auto& s : sinks_) sinks.push_back(s.get());
  sink_thread_ = std::make_unique<SinkThread>(std::move(sinks));
  SamplerOptions sampling;
  sampling.sample_hz = 1 / options_.interval_s;
  sampling.interval_s = options_.interval_s;
  sampler_ = std::make_unique<Sampler>(sampling, Clock::Default(), std::move(sources),
                                       sink_thread_.get(), std::vector<SampleObserver*>{&fleet_});
}

NodeAgent::~NodeAgent() { Stop(); }

void NodeAgent::Start() {
  sink_thread_->Start();
  sampler_->Start();
}

void NodeAgent::Stop() {
  if (!sampler_) return;
  if (!sampler_->Stop()) {
    // Stuck in a driver call: it and what it feeds are left running, never freed.
    (void)sampler_.release();
    (void)sink_thread_.release();
    return;
  }
  sampler_.reset();
  sink_thread_->Close();
}

}  // namespace tv
