"""deploy/prometheus/job_rules.yml: the straggler ranks and nodes of one job
across nodes, live in Prometheus (docs/cluster.md, "Stragglers of a job across
nodes").

promtool checks the rules and runs their unit tests (job_rules_test.yml: a
slow rank on a second node, a whole slow node, a node whose ranks wait for their
data, one rank that waits beside one that does not on the same node, a
straggler rank of a one-node job, a healthy two-node job, two jobs never
compared, a single-rank job); prometheus.yml loads them. Then a real Prometheus
evaluates them, windows shortened, on the series of a real `trainvitals run
--prometheus` of three ranks, one slow because it waits for its data."""
import json
import os
import shlex
import subprocess
import sys

import yaml

from conftest import ROOT, cli_path
from prom_services import free_port, http_get, need, query, start_prometheus, wait_for

RULES = ROOT / "deploy" / "prometheus"
# What names a job or a rank, kept out of the tests' own environment (a CI inside Slurm).
NAMING = ("SLURM_", "TORCHELASTIC_", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "RANK",
          "LOCAL_RANK", "PADDLE_TRAINER_ID")

# One rank: takes a batch after WAIT seconds (timed as its data wait) and steps
# PERIOD seconds later, for at most a minute (ended by the test).
RANK = """
import sys, time
import trainvitals
period, wait = float(sys.argv[1]), float(sys.argv[2])
def batches():
    while True:
        time.sleep(wait)
        yield None
with trainvitals.monitor() as m:
    m.epoch(0)
    end = time.monotonic() + 60
    for i, _ in enumerate(m.data(batches())):
        if time.monotonic() >= end:
            break
        time.sleep(period)
        m.step(i)
"""


def test_the_shipped_job_rules_pass_promtool_and_prometheus_loads_them():
    promtool = need("promtool")
    for args, said in ((["check", "rules", "job_rules.yml"], "SUCCESS: 9 rules found"),
                       (["test", "rules", "job_rules_test.yml"], "SUCCESS")):
        r = subprocess.run([promtool, *args], cwd=RULES, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0 and said in r.stdout, f"promtool {args}:\n{r.stdout}{r.stderr}"
    config = yaml.safe_load((RULES / "prometheus.yml").read_text())
    assert "job_rules.yml" in config["rule_files"], config["rule_files"]


def test_prometheus_names_the_straggler_rank_of_a_live_run(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    py = shlex.quote(sys.executable)
    ranks = " & ".join(f"RANK={rank} {py} {shlex.quote(str(script))} {period} {wait}"
                       for rank, period, wait in ((0, 0.02, 0), (1, 0.02, 0), (2, 0.02, 0.08)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(NAMING)}
    env["PYTHONPATH"] = str(ROOT / "python")
    port = free_port()
    run = subprocess.Popen(
        [cli_path(), "run", "--quiet", "--out", str(tmp_path / "run"), "--db",
         str(tmp_path / "runs.db"), "--interval", "0.5", "--job-id", "straggle-1",
         "--prometheus", f"127.0.0.1:{port}", "--", "sh", "-c", f"{ranks} & wait"], env=env)
    # The shipped rules, over seconds instead of minutes.
    rules = tmp_path / "job_rules.yml"
    shipped = (RULES / "job_rules.yml").read_text()
    assert "[1m]" in shipped and "for: 5m" in shipped
    rules.write_text(shipped.replace("[1m]", "[5s]").replace("for: 5m", "for: 2s"))
    prom = None
    try:
        url = f"http://127.0.0.1:{port}/metrics"

        def served():
            text = http_get(url)[2]
            return text if all(text.count(f"trainvitals_training_process_{name}{{") == 3
                               for name in ("steps_total", "data_wait_ratio")) else None

        text = wait_for(served, what="three ranks and their data wait on /metrics")
        check = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                               capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        # As deploy/prometheus/prometheus.yml scrapes runs: the job label is the job's id.
        prom = start_prometheus(tmp_path, [f"127.0.0.1:{port}"], rule_files=[rules],
                                honor_labels=True)

        def firing(name):
            result = query(prom.url, f'ALERTS{{alertname="{name}", alertstate="firing"}}')
            return [r["metric"] for r in result["data"]["result"]]

        [alert] = wait_for(lambda: firing("TrainingStragglerRank"), timeout=60,
                           what="the slow rank's alert")
        [host] = {r["metric"]["host"]
                  for r in query(prom.url, 'trainvitals_job_processes{job="straggle-1"}')
                  ["data"]["result"]}
        assert (alert["job"], alert["host"], alert["rank"]) == ("straggle-1", host, "2"), alert
        ranks = query(prom.url, 'trainvitals:job_ranks{job="straggle-1"}')["data"]["result"]
        assert [float(r["value"][1]) for r in ranks] == [3], ranks
        # One node: the rank is the straggler, never the node.
        assert firing("TrainingStragglerNode") == []
        # Each rank's own data wait, not its node's mean: rank 2 waits most of
        # the time, at least 0.2 above the job's median; its node's fast ranks
        # hardly at all.
        waits = {r["metric"]["rank"]: float(r["value"][1])
                 for r in query(prom.url, 'trainvitals:rank_data_wait_ratio{job="straggle-1"}')
                 ["data"]["result"]}
        [median] = [float(r["value"][1]) for r in
                    query(prom.url, 'trainvitals:job_data_wait_ratio:median{job="straggle-1"}')
                    ["data"]["result"]]
        assert set(waits) == {"0", "1", "2"}, waits
        assert waits["2"] >= median + 0.2 and max(waits["0"], waits["1"]) < 0.2, (waits, median)

        # The dashboard's step rate per node of the job: the node's slowest rank
        # is below 75 % of the job's median.
        dash = json.loads((ROOT / "deploy" / "grafana" / "trainvitals.json").read_text())
        [panel] = [p for p in dash["panels"] if p["title"].startswith("Step rate per node")]

        def shown(target):
            expr = target["expr"].replace("$job", "straggle-1").replace("$__rate_interval", "5s")
            return {r["metric"].get("host", ""): float(r["value"][1])
                    for r in query(prom.url, expr)["data"]["result"]}

        slowest, median, line = (shown(t) for t in panel["targets"])
        assert set(slowest) == {host} and slowest[host] < line[""] < median[""], (slowest, median)
        # Its data wait per rank: rank 2's line is above the job's median + 0.2.
        [panel] = [p for p in dash["panels"] if p["title"].startswith("Data wait per rank")]
        assert [t["legendFormat"] for t in panel["targets"]][0] == "{{host}} rank {{rank}}"

        def per_rank(target):
            expr = target["expr"].replace("$job", "straggle-1").replace("$__rate_interval", "5s")
            return {r["metric"].get("rank", ""): float(r["value"][1])
                    for r in query(prom.url, expr)["data"]["result"]}

        waits, median, line = (per_rank(t) for t in panel["targets"])
        assert set(waits) == {"0", "1", "2"} and waits["2"] > line[""] > median[""], (waits, line)
    finally:
        if prom is not None:
            prom.stop()
        run.terminate()  # run passes it to the training, which ends
        run.wait(timeout=30)
