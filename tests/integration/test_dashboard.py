"""deploy/grafana/trainvitals.json: valid, and every query runs on a real Prometheus."""
import json
import re

from conftest import ROOT
from prom_services import query, wait_for

DASHBOARD = ROOT / "deploy" / "grafana" / "trainvitals.json"
ALL = {"$host": ".*", "$run": ".*", "$rank": ".*", "$gpu": ".*", "$job": ".*",
       "$__rate_interval": "1m", "$pue": "1.2", "$g_per_kwh": "475", "$kwh_price": "0.3"}


def substitute(expr):
    for name in sorted(ALL, key=len, reverse=True):
        expr = expr.replace(name, ALL[name])
    assert "$" not in expr, expr
    return expr


def as_promql(variable_query):
    """Grafana's label_values(METRIC, LABEL) as the PromQL it stands for."""
    m = re.fullmatch(r"label_values\((.+), (\w+)\)", variable_query)
    assert m, variable_query
    return f"group by ({m.group(2)}) ({m.group(1)})"


def load():
    dash = json.loads(DASHBOARD.read_text())
    assert dash["uid"] and dash["title"]
    return dash


def test_dashboard_is_well_formed():
    dash = load()
    names = {v["name"] for v in dash["templating"]["list"]}
    assert {"datasource", "host", "run", "rank", "gpu"} <= names
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dash["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}"
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert "trainvitals_" in target["expr"]


def test_every_panel_and_variable_query_runs(prom_live):
    wait_for(lambda: query(prom_live["prom"], "trainvitals_job_processes")["data"]["result"],
             timeout=40, what="a first scrape")
    dash = load()
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [as_promql(v["query"]) for v in dash["templating"]["list"] if v["type"] == "query"]
    for expr in exprs:
        answer = query(prom_live["prom"], substitute(expr))
        assert answer["status"] == "success", (expr, answer)
    memory = query(prom_live["prom"], substitute(dash["panels"][2]["targets"][0]["expr"]))
    assert memory["data"]["result"], "the job memory panel shows the live run"
