"""`trainvitals check` says what this machine offers, as text and JSON."""
import json
import subprocess


def test_check_reports_the_machine_as_json_and_text(tv):
    proc = subprocess.run([tv, "check", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["cpus_online"] >= 1
    assert report["memory_total_bytes"] > 0
    assert report["process_tree"]["children_files"] is True
    assert isinstance(report["rapl"]["readable"], bool)
    if not report["rapl"]["readable"]:
        assert report["rapl"]["problem"]
    text = subprocess.run([tv, "check"], capture_output=True, text=True).stdout
    assert "Process tree" in text and "CPU energy" in text
