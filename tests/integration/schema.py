"""Checks a run directory against docs/schema.md: every key a file holds, every
event type and every epoch-record key must be documented there."""
import json
import re

from conftest import ROOT, read_jsonl

GPU_IDS = {"index", "physical_index", "mig"}


def documented():
    """Names in the first column of each table, by the heading above it."""
    sections, current = {}, None
    for line in (ROOT / "docs" / "schema.md").read_text().splitlines():
        if line.startswith("#"):
            current = line.lstrip("#").strip()
        elif line.startswith("| `"):
            cells = line.split("|")
            names = sections.setdefault(current, set())
            names.update(re.findall(r"`([^`]+)`", cells[1]))
            if current.startswith("Epoch records"):  # nested keys are listed in the meaning
                names.update(f"{cells[1].strip('` ')}.{k}" for k in re.findall(r"`([^`]+)`", cells[3]))
    return sections


def check_run_dir(out):
    docs = documented()
    section = lambda prefix: set().union(*(v for k, v in docs.items() if k.startswith(prefix)))
    metrics = section("Host and job") | section("samples.jsonl")
    gpu_metrics = section("Per GPU")

    meta = json.loads((out / "meta.json").read_text())
    assert set(meta) <= section("meta.json"), set(meta) - section("meta.json")

    for row in read_jsonl(out / "samples.jsonl"):
        assert set(row) <= section("samples.jsonl"), set(row) - section("samples.jsonl")
        for scope in ("host", "job", "training"):
            extra = {f"{scope}.{k}" for k in row.get(scope, {})} - metrics
            assert not extra, extra
        for gpu in row["gpus"]:
            extra = {f"gpus[].{k}" for k in gpu if k not in GPU_IDS} - gpu_metrics
            assert not extra, extra

    types = {e["type"] for e in read_jsonl(out / "events.jsonl")}
    assert types <= section("events.jsonl"), types - section("events.jsonl")

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) <= section("summary.json"), set(summary) - section("summary.json")
    records = section("Epoch records")
    for epoch in summary["epochs"]:
        keys = {k for k in epoch if k != "gpus" and k != "ranks"}
        keys |= {f"gpus[].{k}" for g in epoch.get("gpus", []) for k in g}
        keys |= {f"ranks[].{k}" for r in epoch.get("ranks", []) for k in r}
        assert keys <= records | {"gpus[]", "ranks[]"}, keys - records
