#pragma once
// The tests a claim suite's verdicts rest on: Student's t distribution (a paired one-sample t-test on per-seed
// margins and its confidence interval), the exact two-sided sign test for margins where a target was never reached,
// Holm's step-down correction across the rules of one suite, and how many seeds a t-test would need to decide at the
// spread observed. Plain functions of numbers, so they can be checked against tables.
#include <optional>
#include <vector>

namespace ps {

constexpr double kVerdictAlpha = 0.05;  // two-sided level of every verdict

// P(|T| >= |t|) for Student's t with `df` degrees of freedom (df >= 1).
double studentTwoSidedP(double t, int df);
// The quantile of Student's t: the x with P(T <= x) = q, for 0.5 <= q < 1 and df >= 1.
double studentQuantile(double q, int df);

struct TTest {
  double t = 0, p = 1;
  double ciLow = 0, ciHigh = 0;  // 95% confidence interval of the mean
};
// The one-sample t-test of mean = 0 from a sample's mean, its sd (n - 1) and its size (n >= 2). A sample with no
// spread has p = 0 when its mean is not zero and p = 1 when it is.
TTest pairedTTest(double mean, double sd, int n);

// The exact two-sided sign test of "positive and negative are equally likely": 2 P(X <= min(pos, neg)), X binomial
// (pos + neg, 1/2), at most 1. Ties are left out by the caller.
double signTestTwoSidedP(int positive, int negative);
// The fewest seeds, all agreeing, with which the sign test can decide at kVerdictAlpha (6).
int signTestSeedsToDecide();

// Holm's step-down adjustment of a family of p-values: each returned in the place it came from, never below its
// own p and never above 1; a NaN (a rule with no test) is left NaN and is not counted in the family.
std::vector<double> holmAdjusted(const std::vector<double>& p);

// The fewest seeds (at least 3) with which a paired t-test would reject zero at kVerdictAlpha if the margins kept this
// mean and spread; nullopt when not within `limit` seeds (a mean of zero never decides).
std::optional<int> seedsToDecide(double mean, double sd, int limit = 1000);

}  // namespace ps
