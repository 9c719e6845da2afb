"""`trainvitals report RUN0 RUN1`: one page of a job of several nodes, each
node drawn on one time axis (its clock lined up with the first node's), the
job's health and findings beside a column per node. The node directories are
written as test_analyze_joined.py writes them."""
import html
import json
import re
import subprocess

from conftest import cli_path
from test_analyze_joined import ROWS, write_node


def report(*args, cwd):
    return subprocess.run([cli_path(), "report", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def page_data(page):
    m = re.search(r'<script id="tv-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def test_a_job_page_draws_each_node_on_one_time_axis_with_the_straggler_named(tmp_path):
    a = write_node(tmp_path, "job42/node-a", "gpu-a", "42", {0: 0.02, 1: 0.03})
    b = write_node(tmp_path, "job42/node-b", "gpu-b", "42", {2: 0.02, 3: 0.58}, clock_s=9)
    out = tmp_path / "page.html"
    p = report(a, b, "-o", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(out)
    page = out.read_text()
    assert "<h1>trainvitals report: job 42 — 2 nodes</h1>" in page
    assert "<th>gpu-a</th><th>gpu-b</th>" in page
    assert "the health of its lowest node, gpu-" in page

    data = page_data(page)
    assert [r["label"] for r in data["runs"]] == ["gpu-a", "gpu-b"]
    xa, xb = data["runs"][0]["x"], data["runs"][1]["x"]
    assert len(xa) == len(xb) == ROWS
    # gpu-b's clock runs 9 s ahead: lined up, its rows fall on gpu-a's.
    assert all(abs(p - q) < 0.1 for p, q in zip(xa, xb)), (xa[:3], xb[:3])

    # Each rank's own series on the training chart, labelled by its rank.
    labels = {s["label"] for s in data["runs"][1]["series"] if s["chart"] == "training"}
    assert {"rank 2 steps/s", "rank 3 steps/s", "rank 3 data wait"} <= labels
    wait = next(s for s in data["runs"][1]["series"] if s["label"] == "rank 3 data wait")
    assert max(v for v in wait["v"] if v is not None) == 58  # percent

    # The job's findings: the straggler on gpu-b, its span on gpu-b's run.
    table = page[page.index('<table id="findings">'):]
    table = html.unescape(table[:table.index("</table>")])
    assert "<td>straggler</td><td>rank 3, node gpu-b</td>" in table
    spans = [s for s in data["runs"][1]["spans"] if s[2] == "finding"]
    assert any(s[3].startswith("straggler") for s in spans), data["runs"][1]["spans"]
    assert not any(s[3].startswith("straggler") for s in data["runs"][0]["spans"])


def test_a_job_is_found_by_its_id_under_the_shared_root(tmp_path):
    write_node(tmp_path, "shared/job42/node-a", "gpu-a", "42", {0: 0.02, 1: 0.03})
    write_node(tmp_path, "shared/job42/node-b", "gpu-b", "42", {2: 0.02, 3: 0.58})
    write_node(tmp_path, "shared/job43/node-a", "gpu-a", "43", {0: 0.02})
    p = report("--job", "42", "--runs-dir", "shared", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "shared" / "job42" / "node-a" / "report.html"
    assert p.stdout.strip() == str(out.relative_to(tmp_path)) or p.stdout.strip() == str(out)
    page = out.read_text()
    assert "<h1>trainvitals report: job 42 — 2 nodes</h1>" in page
    assert "<th>gpu-a</th><th>gpu-b</th>" in page
    p = report("--job", "44", "--runs-dir", "shared", cwd=tmp_path)
    assert p.returncode == 2 and "no run directory of job 44 under shared" in p.stderr
    p = report("--job", "42", "--runs-dir", "shared", "--compare", "x", cwd=tmp_path)
    assert p.returncode == 2 and "several RUNs" in p.stderr


def test_several_runs_with_compare_is_a_usage_error(tmp_path):
    a = write_node(tmp_path, "job42/node-a", "gpu-a", "42", {0: 0.02})
    b = write_node(tmp_path, "job42/node-b", "gpu-b", "42", {1: 0.02})
    p = report(a, b, "--compare", a, "-o", tmp_path / "page.html", cwd=tmp_path)
    assert p.returncode == 2
    assert "--compare" in p.stderr and "several RUNs" in p.stderr
    assert not (tmp_path / "page.html").exists()


def test_directories_of_two_jobs_are_refused(tmp_path):
    a = write_node(tmp_path, "a", "gpu-a", "42", {0: 0.02})
    b = write_node(tmp_path, "b", "gpu-b", "43", {1: 0.02})
    p = report(a, b, "-o", tmp_path / "page.html", cwd=tmp_path)
    assert p.returncode == 2
    assert "42" in p.stderr and "43" in p.stderr
