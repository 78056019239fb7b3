#include "diagnose/heuristics/growth_with_load.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "diagnose/heuristics/sql_shape.hpp"
#include "stats/descriptive.hpp"

namespace sonde::diagnose::heuristics {

std::vector<size_t> violating_step_indexes(const Context& ctx,
                                           const std::vector<const Experiment*>& steps) {
  std::set<int> users;
  if (auto it = ctx.ancestors.find("traffic_jam"); it != ctx.ancestors.end()) {
    const nlohmann::json tj = it->second;
    if (tj.contains("violating_users")) {
      for (const auto& u : tj["violating_users"]) users.insert(u.get<int>());
    }
  }
  std::vector<size_t> out;
  for (size_t s = 1; s < steps.size(); ++s) {
    if (users.empty() || users.count(steps[s]->users)) out.push_back(s);
  }
  return out;
}

std::vector<std::string> growth_with_load(const Context& ctx, const GrowthSpec& spec,
                                          NodeResult& r) {
  std::vector<std::string> grown;
  const std::vector<const Experiment*> steps = ctx.data.series("scaling");
  if (steps.size() < 2) {
    r = not_evaluated("needs a scaling series with >= 2 complete steps");
    return grown;
  }
  const KeyedSeries ks = keyed_series(steps, spec.record_class, spec.probe, spec.value_field,
                                      spec.key_field, 1e-6, spec.sql_key ? &sql_shape : nullptr);
  if (!ks.error.empty()) {
    r = not_evaluated(ks.error);
    return grown;
  }
  const std::vector<size_t> critical = violating_step_indexes(ctx, steps);
  std::set<std::string> keys;
  for (const auto& step : ks.per_step) {
    for (const auto& [key, values] : step) keys.insert(key);
  }
  if (keys.empty()) {
    r.status = Status::kNotDetected;
    r.reason = "no " + spec.record_class + " records in the scaling series";
    return grown;
  }
  nlohmann::json chart = nlohmann::json::array();
  // Keys that grew, with their weakest step's relative increase: the
  // strongest comes first in the evidence and the reason, as under load
  // every statement of a shared server slows a little (scenario tc15: the
  // table lock's wait +134% and +185%, COMMIT's +14% and +25%).
  struct Grown {
    std::string key;
    double weakest = 0;
    std::vector<Evidence> evidence;
  };
  std::vector<Grown> found_keys;
  // Keys that did not grow at every violating load, as checked rows after
  // the findings (a reader sees why not): those that grew at most steps
  // and then most first, at most kCheckedKeys of them.
  struct Checked {
    int increased = 0;
    double weakest = 0;
    std::vector<Evidence> evidence;
  };
  constexpr size_t kCheckedKeys = 5;
  std::vector<Checked> checked_keys;
  for (const std::string& key : keys) {
    int increased = 0;
    double weakest = INFINITY;
    std::vector<Evidence> evs;
    nlohmann::json points = nlohmann::json::array();
    for (size_t s = 0; s < steps.size(); ++s) {
      auto it = ks.per_step[s].find(key);
      if (it != ks.per_step[s].end()) {
        points.push_back({steps[s]->users, stats::mean(it->second), it->second.size()});
      }
    }
    for (size_t s : critical) {
      static const std::vector<double> none;
      auto a = ks.per_step[s - 1].find(key);
      auto b = ks.per_step[s].find(key);
      const std::vector<double>& va = a == ks.per_step[s - 1].end() ? none : a->second;
      const std::vector<double>& vb = b == ks.per_step[s].end() ? none : b->second;
      const std::string between =
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) + " users";
      if (spec.absent_means_zero && va.empty() && vb.size() >= spec.min_appearing) {
        // Nothing to compare with a t-test: none at the lower load, many at
        // the higher one. The count is the evidence.
        ++increased;
        Evidence ev;
        ev.location = spec.key_label + " " + key;
        ev.test = "appearance: none at the lower load, >= " + std::to_string(spec.min_appearing) +
                  " at the higher";
        ev.effect_size = stats::mean(vb);
        ev.effect = "mean at the higher load, ms (0 at the lower)";
        ev.data = between + ", n=0/" + std::to_string(vb.size());
        ev.detail = spec.key_label + " " + key + ": none at " +
                    std::to_string(steps[s - 1]->users) + " users, " + std::to_string(vb.size()) +
                    " (mean " + fmt(ev.effect_size) + " ms) at " + std::to_string(steps[s]->users) +
                    " users";
        ev.values = {{"mean_before", 0},
                     {"mean_after", ev.effect_size},
                     {"n_before", 0},
                     {"n_after", vb.size()}};
        evs.push_back(std::move(ev));
        continue;  // appearing is the strongest growth: weakest stays
      }
      const Increase inc =
          test_increase(va, vb, ctx.settings.alpha, ctx.params.at("min_relative_increase"));
      increased += inc.significant;
      weakest = std::min(weakest, inc.relative);
      Evidence ev = increase_evidence(
          inc, spec.key_label + " " + key,
          std::to_string(steps[s - 1]->users) + " -> " + std::to_string(steps[s]->users) +
              " users, n=" + std::to_string(va.size()) + "/" + std::to_string(vb.size()));
      ev.detail = spec.key_label + " " + key + ": mean " + fmt(inc.test.mean_a) + " ms -> " +
                  fmt(inc.test.mean_b) + " ms from " + std::to_string(steps[s - 1]->users) +
                  " to " + std::to_string(steps[s]->users) + " users";
      evs.push_back(std::move(ev));
    }
    const bool found = !critical.empty() && increased == static_cast<int>(critical.size());
    if (found) {
      // Where: the context values (operations that waited, lock addresses).
      if (!spec.context_field.empty()) {
        std::map<std::string, int> ops;
        for (const LogRecord& rec : log_records(*steps.back(), spec.record_class).records) {
          if (rec.text(spec.key_field) == key) ++ops[rec.text(spec.context_field)];
        }
        std::string where;
        for (const auto& [op, n] : ops)
          where += (where.empty() ? "" : ", ") + op + " (" + std::to_string(n) + ")";
        for (Evidence& ev : evs) ev.values[spec.context_field + "s"] = where;
      }
      found_keys.push_back({key, weakest, std::move(evs)});
    } else if (!evs.empty()) {
      for (Evidence& ev : evs) ev.values["found"] = false;
      checked_keys.push_back({increased, std::isinf(weakest) ? 0 : weakest, std::move(evs)});
    }
    chart.push_back({{"key", key}, {"points", points}, {"found", found}});
  }
  r.charts["growth"] = chart;
  std::stable_sort(found_keys.begin(), found_keys.end(),
                   [](const Grown& a, const Grown& b) { return a.weakest > b.weakest; });
  for (Grown& g : found_keys) {
    grown.push_back(g.key);
    for (Evidence& ev : g.evidence) r.evidence.push_back(std::move(ev));
  }
  std::stable_sort(
      checked_keys.begin(), checked_keys.end(), [](const Checked& a, const Checked& b) {
        return a.increased != b.increased ? a.increased > b.increased : a.weakest > b.weakest;
      });
  if (checked_keys.size() > kCheckedKeys) checked_keys.resize(kCheckedKeys);
  for (Checked& c : checked_keys) {
    for (Evidence& ev : c.evidence) r.evidence.push_back(std::move(ev));
  }
  r.status = grown.empty() ? Status::kNotDetected : Status::kDetected;
  if (grown.empty()) {
    r.reason = "no " + spec.key_label + " gets significantly slower at every violating load";
  } else {
    const Grown& top = found_keys.front();
    r.reason = std::to_string(grown.size()) + " " + spec.key_label +
               "(s) get significantly slower at every violating load; most: " + spec.key_label +
               " " + top.key +
               (std::isinf(top.weakest) ? " (appears under load)"
                                        : " (at least +" + fmt(top.weakest * 100) + "% per step)");
  }
  return grown;
}

}  // namespace sonde::diagnose::heuristics
