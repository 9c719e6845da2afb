// Alerts in words: the stderr line said as an alert fires, resolves, its
// action fails or its notices are lost (from its event), and the summary's
// "Alerts" lines (from summary.json "alerts").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tv {

// "trainvitals: ALERT gpu-low-util (warning, GPU 0): <summary>", "trainvitals:
// resolved gpu-low-util (GPU 0) after 12 s: GPU 0 util 45%, back over 20%"
// (its event's summary: what holds now), "trainvitals: alert gpu-low-util:
// its webhook failed: <message>", "trainvitals: 3 alert notices were not
// delivered (gpu-low-util webhook: 1 failed, 2 cut off by the end)".
std::string FormatAlertLine(std::string_view type, const nlohmann::ordered_json& fields);

// One "  Alerts   ..." line per alert that fired; empty when none did.
std::string FormatAlerts(const nlohmann::ordered_json& alerts);

}  // namespace tv
