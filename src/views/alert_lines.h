// Alerts in words: the stderr line said as an alert fires, resolves, its
// action fails or its notices are lost (from its event's record), and the
// summary's "Alerts" lines (from summary.json "alerts").
#pragma once

#include <string>
#include <vector>

#include "core/event.h"
#include "store/alert_record.h"

namespace tv {

// "trainvitals: ALERT gpu-low-util (warning, GPU 0): <summary>", "trainvitals:
// resolved gpu-low-util (GPU 0) after 12 s: GPU 0 util 45%, back over 20%"
// (its event's summary: what holds now).
std::string FormatAlertLine(const AlertEventRecord& event);
// "trainvitals: alert gpu-low-util: its webhook failed: <message>".
std::string FormatAlertLine(const AlertActionFailedRecord& event);
// "trainvitals: 3 alert notices were not delivered (gpu-low-util webhook: 1
// failed, 2 cut off by the end)".
std::string FormatAlertLine(const AlertNoticesLostRecord& event);
// The line of an alert_firing, alert_resolved, alert_action_failed or
// alert_notices_lost event, read through its record; empty for an event of
// another type or one its record cannot read.
std::string FormatAlertLine(const Event& event);

// One "  Alerts   ..." line per alert that fired; empty when none did.
std::string FormatAlerts(const std::vector<AlertRecord>& alerts);

}  // namespace tv
