// trainvitals serve [--listen ADDR] [--interval S] [--linger S] [--max-jobs N]
// [--node NAME] [--config FILE] [--spool DIR] [--db FILE]: one agent for the whole node;
// every job on it on /metrics, and each as a run directory in the spool (docs/cluster.md).
#include "run/serve.h"

#include <fmt/format.h>
#include <signal.h>

#include <cstdio>

#include "analysis/cost.h"
#include "analysis/findings/table.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/endpoint.h"
#include "sinks/metrics_server.h"

namespace tv {

void AddServeCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "serve",
      "Run one agent for the whole node: sample the host, every GPU and every job on it (Slurm "
      "jobs, Kubernetes pods, containers, systemd units and sessions that use a GPU), found "
      "from their cgroups, and serve them all on /metrics for Prometheus (docs/cluster.md); "
      "with --spool, keep each job as a run directory in the run history. Runs until SIGINT "
      "or SIGTERM.");
  auto listen = std::make_shared<std::string>(":9402");
  auto options = std::make_shared<ServeOptions>();
  cmd->add_option("--listen", *listen,
                  "Where /metrics is served: PORT (this machine only), HOST:PORT, :PORT (every "
                  "interface)")
      ->type_name("ADDR")
      ->capture_default_str();
  cmd->add_option("--interval", options->interval_s, "Seconds between samples (one row each)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.1, 60.0))
      ->capture_default_str();
  cmd->add_option("--linger", options->fleet.linger_s,
                  "Seconds an ended job's series stay on /metrics")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--max-jobs", options->fleet.max_jobs,
                  "Most jobs followed at once; more are counted in trainvitals_jobs_dropped_total")
      ->type_name("N")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--node", options->node, "The node's name on every series (default: host name)")
      ->type_name("NAME");
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("--config", *config_file,
                  "A TOML file whose [findings] table sets the thresholds jobs are judged by "
                  "(docs/findings.md) and whose [cost] table prices them")
      ->type_name("FILE");
  auto* spool =
      cmd->add_option("--spool", options->spool,
                      "Keep every job as a run directory here (meta.json, samples.jsonl, "
                      "events.jsonl, summary.json once it ends), indexed in the run history")
          ->type_name("DIR");
  cmd->add_option("--db", options->db,
                  "The run history the spooled jobs go into: an SQLite file or a "
                  "postgresql:// URL (default: DIR/runs.db)")
      ->type_name("FILE|URL")
      ->needs(spool);
  cmd->add_option("--kubelet-socket", options->kubelet_socket,
                  "The kubelet's pod-resources socket, asked for the namespace, pod and "
                  "container names of Kubernetes jobs")
      ->type_name("PATH")
      ->capture_default_str();
  cmd->callback([=] {
    *action = [=]() {
      // Every thread the agent starts inherits these blocked; sigwait takes them.
      sigset_t stop;
      sigemptyset(&stop);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
      ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
      ServeOptions o = *options;
      o.listen = ParseListenAddress("--listen", *listen);
      if (!config_file->empty()) {
        Config config;
        ApplyConfigFile(*config_file, config);
        o.fleet.thresholds = ThresholdsFrom(config.findings);
        o.fleet.cost_rates = LoadCostRates(config.cost_file);
      }

      NodeAgent agent(o);
      for (const Notice& n : agent.notices()) {
        std::fprintf(stderr, "trainvitals serve: %s: %s\n", n.source.c_str(), n.message.c_str());
      }
      agent.Start();
      std::fprintf(
          stderr, "%s",
          fmt::format("trainvitals serve: node {}, {} GPU unit(s), metrics on "
                      "http://{}:{}/metrics\n",
                      agent.node(), agent.gpus(), agent.server().host(), agent.server().port())
              .c_str());
      int sig = 0;
      sigwait(&stop, &sig);
      agent.Stop();
      return 0;
    };
  });
}

}  // namespace tv
