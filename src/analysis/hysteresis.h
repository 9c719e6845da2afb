// Hysteresis: a condition fed row by row that turns something on once it has
// held for a while and off once it has been clear for a while, so what it
// drives does not flap. A finding opens after open_s and closes after hold_s
// (findings/rule.h); an alert fires after `for` and resolves after
// `keep_firing_for` (alerts/evaluator.cc). Whether the thing is on is the
// caller's: it turns it on or off when Feed says so.
//
// Thread safety: none; one thread feeds it.
#pragma once

#include <optional>

namespace tv {

struct Hysteresis {
  enum class Edge { kNone, kRise, kFall };

  // Feeds `cond` at `t` for a thing that is `on` now: kRise when it is off
  // and the condition has held for `rise_after_s`; kFall when it is on and
  // the condition has been clear for `fall_after_s`; else kNone.
  Edge Feed(double t, bool cond, bool on, double rise_after_s, double fall_after_s) {
    if (cond) {
      clear_since.reset();
      if (!true_since) true_since = t;
      return !on && t - *true_since >= rise_after_s ? Edge::kRise : Edge::kNone;
    }
    true_since.reset();
    if (!on) return Edge::kNone;
    if (!clear_since) clear_since = t;
    if (t - *clear_since < fall_after_s) return Edge::kNone;
    clear_since.reset();
    return Edge::kFall;
  }

  std::optional<double> true_since;   // the condition holds since
  std::optional<double> clear_since;  // it has not held since, while on
};

}  // namespace tv
