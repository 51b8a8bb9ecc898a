#include "engine/plan/PlanSearch.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ps::plan {

namespace {

bool finiteNonNegative(double v) {
  return std::isfinite(v) && v >= 0;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("plan: " + what);
}

// Whether `a` is a better plan than `b`: feasible first, then less time to target (or, both infeasible, less accuracy
// lost); ties keep `b`, the earlier.
bool better(const Plan& a, const Plan& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (!a.feasible) return a.accuracy_cost < b.accuracy_cost - 1e-12;  // towards the budget
  return a.time_factor() < b.time_factor() * (1 - 1e-12);
}

// Of two feasible plans within the tie tolerance, whether `a` rests less on error alone than `b` (then is faster).
bool safer(const Plan& a, const Plan& b) {
  if (a.risk < b.risk - 1e-12) return true;
  return a.risk <= b.risk + 1e-12 && a.time_factor() < b.time_factor() * (1 - 1e-12);
}

}  // namespace

std::vector<LinkDirection> directionsOf(const StepTrace& step) {
  std::vector<LinkDirection> out;
  for (const auto& [direction, cost] : meanMessageCosts(step)) out.push_back(direction);
  return out;
}

void Problem::check() const {
  require(!directions.empty(), "the problem has no link directions to plan");
  require(options.size() == directions.size(), "options are given for " + std::to_string(options.size()) +
                                                   " link directions, not the " + std::to_string(directions.size()) +
                                                   " planned");
  require(finiteNonNegative(accuracy_budget), "the accuracy budget must be a number of points >= 0");
  require(finiteNonNegative(tie_tolerance) && tie_tolerance < 1, "the tie tolerance must be a fraction in [0, 1)");
  const auto used = directionsOf(profiled);
  for (size_t d = 0; d < directions.size(); ++d) {
    const std::string name = linkDirectionName(directions[d]);
    require(std::find(used.begin(), used.end(), directions[d]) != used.end(),
            "the profiled step sends nothing on " + name);
    require(!options[d].empty(), name + " has no options");
    for (const Option& o : options[d]) {
      const std::string what = name + " option '" + o.setting + "'";
      require(
          finiteNonNegative(o.cost.encode_s) && finiteNonNegative(o.cost.decode_s) && finiteNonNegative(o.cost.bytes),
          what + ": times and bytes must be finite and >= 0");
      require(std::isfinite(o.steps_factor) && o.steps_factor > 0, what + ": the steps factor must be > 0");
      require(finiteNonNegative(o.accuracy_cost), what + ": the accuracy cost must be >= 0 points");
      require(finiteNonNegative(o.risk), what + ": the risk must be finite and >= 0");
    }
  }
}

Plan evaluate(const Problem& problem, const std::vector<size_t>& choice) {
  require(choice.size() == problem.directions.size(), "an assignment must choose for every planned direction");
  std::map<LinkDirection, MessageCost> costs;
  Plan plan;
  plan.choice = choice;
  plan.steps_factor = 0;
  for (size_t d = 0; d < choice.size(); ++d) {
    require(choice[d] < problem.options[d].size(),
            linkDirectionName(problem.directions[d]) + " has no option " + std::to_string(choice[d]));
    const Option& o = problem.options[d][choice[d]];
    costs[problem.directions[d]] = o.cost;
    plan.steps_factor = std::max(plan.steps_factor, o.steps_factor);
    plan.accuracy_cost += o.accuracy_cost;
    plan.risk += o.risk;
  }
  plan.step_s = replay(withMessageCosts(problem.profiled, costs), problem.network);
  plan.feasible = plan.accuracy_cost <= problem.accuracy_budget + 1e-12;
  plan.evaluated = 1;
  return plan;
}

Plan searchExhaustive(const Problem& problem, size_t limit) {
  problem.check();
  double count = 1;
  for (const auto& o : problem.options) count *= double(o.size());
  require(count <= double(limit), "there are " + std::to_string(uint64_t(count)) +
                                      " assignments, more than the exhaustive search's limit of " +
                                      std::to_string(limit));
  std::vector<size_t> choice(problem.directions.size(), 0);
  Plan best = evaluate(problem, choice);
  size_t evaluated = 1;
  while (true) {  // the next assignment, as an odometer over the directions' options
    size_t d = 0;
    while (d < choice.size() && ++choice[d] == problem.options[d].size()) choice[d++] = 0;
    if (d == choice.size()) break;
    const Plan p = evaluate(problem, choice);
    ++evaluated;
    if (better(p, best)) best = p;
  }
  require(best.feasible,
          "no assignment stays within the accuracy budget of " + std::to_string(problem.accuracy_budget) + " points");
  const double fastest = best.time_factor(), cap = fastest * (1 + problem.tie_tolerance);
  if (problem.tie_tolerance > 0) {  // the second pass: the least risk within the tolerance
    std::fill(choice.begin(), choice.end(), 0);
    while (true) {
      const Plan p = evaluate(problem, choice);
      ++evaluated;
      if (p.feasible && p.time_factor() <= cap && safer(p, best)) best = p;
      size_t d = 0;
      while (d < choice.size() && ++choice[d] == problem.options[d].size()) choice[d++] = 0;
      if (d == choice.size()) break;
    }
  }
  best.fastest = fastest;
  best.evaluated = evaluated;
  best.optimal = true;
  return best;
}

namespace {

// Whether option `a` is at least as good as `b` in everything the plan weighs: its message costs (the replayed step
// never gets shorter when a message takes longer or grows: the replay is a max-plus recursion in a fixed order) and
// its steps factor and accuracy cost.
bool noWorse(const Option& a, const Option& b) {
  return a.cost.encode_s <= b.cost.encode_s && a.cost.decode_s <= b.cost.decode_s && a.cost.bytes <= b.cost.bytes &&
         a.steps_factor <= b.steps_factor && a.accuracy_cost <= b.accuracy_cost && a.risk <= b.risk;
}

// Branch and bound over the directions, in their order. A partial assignment is bounded below by replaying it with
// every open direction at the least encode time, decode time and bytes any of its options has (by monotonicity no
// completion is faster), times the least steps factor a completion can have; it is dropped when that bound is no
// better than the best complete plan, or when even the most accurate completion exceeds the budget. With a `cap` (the
// second search, for ties) it looks for the safest plan with a time factor within the cap instead: a partial
// assignment is dropped when its bound exceeds the cap, when its risk and the least the open directions can add
// exceed the best plan's, or when that risk only equals the best plan's and its bound is no faster.
class BranchAndBound {
 public:
  BranchAndBound(const Problem& p, const std::vector<std::vector<size_t>>& kept, size_t limit, double cap = INFINITY)
      : p_(p), kept_(kept), limit_(limit), n_(p.directions.size()), cap_(cap) {
    ideal_.resize(n_);
    leastAccuracy_.assign(n_ + 1, 0);
    leastSteps_.assign(n_ + 1, 0);
    leastRisk_.assign(n_ + 1, 0);
    for (size_t d = n_; d-- > 0;) {
      MessageCost best{INFINITY, INFINITY, INFINITY};
      double accuracy = INFINITY, steps = INFINITY, risk = INFINITY;
      for (size_t i : kept_[d]) {
        const Option& o = p_.options[d][i];
        best.encode_s = std::min(best.encode_s, o.cost.encode_s);
        best.decode_s = std::min(best.decode_s, o.cost.decode_s);
        best.bytes = std::min(best.bytes, o.cost.bytes);
        accuracy = std::min(accuracy, o.accuracy_cost);
        steps = std::min(steps, o.steps_factor);
        risk = std::min(risk, o.risk);
      }
      ideal_[d] = best;
      leastRisk_[d] = leastRisk_[d + 1] + risk;
      leastAccuracy_[d] = leastAccuracy_[d + 1] + accuracy;
      leastSteps_[d] = std::max(leastSteps_[d + 1], steps);
    }
  }

  // Returns whether the search finished (the plan is then the optimum); `best` is the best plan seen either way.
  bool run(Plan& best) {
    best_ = &best;
    choice_.assign(n_, 0);
    return descend(0, 0, 0, 0);
  }
  size_t evaluated() const { return evaluated_; }

 private:
  bool descend(size_t d, double accuracy, double steps, double risk) {
    if (evaluated_ >= limit_) return false;
    const bool ties = std::isfinite(cap_);
    if (d == n_) {
      ++evaluated_;
      const Plan p = evaluate(p_, choice_);
      if (ties ? p.feasible && p.time_factor() <= cap_ && safer(p, *best_) : better(p, *best_)) *best_ = p;
      return true;
    }
    if (accuracy + leastAccuracy_[d] > p_.accuracy_budget + 1e-12) return true;  // no completion is feasible
    const double leastRisk = risk + leastRisk_[d];
    if (ties && leastRisk > best_->risk + 1e-12) return true;  // no completion is safer
    if (d > 0 && best_->feasible) {
      std::map<LinkDirection, MessageCost> costs;
      for (size_t k = 0; k < n_; ++k) costs[p_.directions[k]] = k < d ? p_.options[k][choice_[k]].cost : ideal_[k];
      ++evaluated_;
      const double bound = replay(withMessageCosts(p_.profiled, costs), p_.network) * std::max(steps, leastSteps_[d]);
      const bool faster = bound < best_->time_factor() * (1 - 1e-12);
      if (ties ? bound > cap_ || (leastRisk >= best_->risk - 1e-12 && !faster) : !faster) return true;
    }
    for (size_t i : kept_[d]) {
      const Option& o = p_.options[d][i];
      choice_[d] = i;
      if (!descend(d + 1, accuracy + o.accuracy_cost, std::max(steps, o.steps_factor), risk + o.risk)) return false;
    }
    return true;
  }

  const Problem& p_;
  const std::vector<std::vector<size_t>>& kept_;
  size_t limit_, n_, evaluated_ = 0;
  double cap_;
  std::vector<MessageCost> ideal_;
  std::vector<double> leastAccuracy_, leastSteps_, leastRisk_;  // from direction d on
  std::vector<size_t> choice_;
  Plan* best_ = nullptr;
};

}  // namespace

std::vector<std::vector<size_t>> uniformChoices(const Problem& problem) {
  std::vector<std::vector<size_t>> out;
  if (problem.options.empty()) return out;
  for (const Option& first : problem.options[0]) {
    std::vector<size_t> choice(problem.options.size());
    bool everywhere = true;
    for (size_t d = 0; d < choice.size() && everywhere; ++d) {
      const auto& o = problem.options[d];
      const auto it = std::find_if(o.begin(), o.end(), [&](const Option& x) { return x.setting == first.setting; });
      everywhere = it != o.end();
      if (everywhere) choice[d] = size_t(it - o.begin());
    }
    if (everywhere) out.push_back(std::move(choice));
  }
  return out;
}

std::optional<Plan> bestUniform(const Problem& problem) {
  std::optional<Plan> best;
  for (const auto& choice : uniformChoices(problem)) {
    Plan p = evaluate(problem, choice);
    if (p.feasible && (!best || p.time_factor() < best->time_factor())) best = std::move(p);
  }
  return best;
}

Plan search(const Problem& problem, size_t limit) {
  problem.check();
  const size_t n = problem.directions.size();
  // An option no better than another of its direction in every respect cannot be needed (the first of equals stays).
  std::vector<std::vector<size_t>> kept(n);
  for (size_t d = 0; d < n; ++d) {
    const auto& o = problem.options[d];
    for (size_t i = 0; i < o.size(); ++i) {
      bool dominated = false;
      for (size_t j = 0; j < o.size() && !dominated; ++j)
        dominated = j != i && noWorse(o[j], o[i]) && (j < i || !noWorse(o[i], o[j]));
      if (!dominated) kept[d].push_back(i);
    }
  }
  // A first plan to bound against: the most accurate option everywhere, and every setting offered on every direction
  // used on all of them.
  size_t evaluated = 0;
  std::vector<size_t> careful(n);
  for (size_t d = 0; d < n; ++d)
    careful[d] = *std::min_element(kept[d].begin(), kept[d].end(), [&](size_t a, size_t b) {
      return problem.options[d][a].accuracy_cost < problem.options[d][b].accuracy_cost;
    });
  Plan best = evaluate(problem, careful);
  ++evaluated;
  for (const auto& uniform : uniformChoices(problem)) {
    const Plan p = evaluate(problem, uniform);
    ++evaluated;
    if (better(p, best)) best = p;
  }
  BranchAndBound bb(problem, kept, limit > evaluated ? limit - evaluated : 0);
  bool finished = bb.run(best);
  evaluated += bb.evaluated();
  require(best.feasible, finished ? "no assignment stays within the accuracy budget of " +
                                        std::to_string(problem.accuracy_budget) + " points"
                                  : "no assignment the search reached within its limit of " + std::to_string(limit) +
                                        " replays stays within the accuracy budget of " +
                                        std::to_string(problem.accuracy_budget) + " points");
  const double fastest = best.time_factor();
  if (problem.tie_tolerance > 0 && finished) {  // the safest plan within the tolerance of the fastest
    BranchAndBound ties(problem, kept, limit > evaluated ? limit - evaluated : 0,
                        fastest * (1 + problem.tie_tolerance));
    finished = ties.run(best);
    evaluated += ties.evaluated();
  }
  best.fastest = fastest;
  best.evaluated = evaluated;
  best.optimal = finished;
  return best;
}

}  // namespace ps::plan
