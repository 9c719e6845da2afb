#include "run/alert_delivery.h"

#include <algorithm>

namespace tv {

std::unique_ptr<AlertActions> StartAlertDelivery(
    std::shared_ptr<const std::vector<AlertRule>> rules, AlertContext context,
    std::function<void(Event)> report, AlertsObserver* alerts) {
  if (std::none_of(rules->begin(), rules->end(),
                   [](const AlertRule& r) { return HasDeliveries(r.actions); })) {
    return nullptr;
  }
  auto actions =
      std::make_unique<AlertActions>(std::move(rules), std::move(context), std::move(report));
  actions->Start();
  alerts->set_notify([actions = actions.get()](AlertNotice n) { actions->Notify(std::move(n)); });
  return actions;
}

}  // namespace tv
