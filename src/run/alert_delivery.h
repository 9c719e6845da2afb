// The alert rules' deliveries for a run: the actions (commands, webhooks,
// Alertmanager, signals; actions/actions.h) started and wired to the alerts
// observer, when a rule asks for any beyond the log.
//
// Thread safety: from the controlling thread, before the sampler starts.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "actions/actions.h"
#include "analysis/alerts/observer.h"

namespace tv {

// Starts the actions of `rules` and has `alerts` notify them; `report` takes
// what the actions' threads report (AlertActions). Null, and `alerts` left
// alone, when no rule delivers anywhere.
std::unique_ptr<AlertActions> StartAlertDelivery(
    std::shared_ptr<const std::vector<AlertRule>> rules, AlertContext context,
    std::function<void(Event)> report, AlertsObserver* alerts);

}  // namespace tv
