// The verdict rule (api/stats/verdict.h, through server/coordinator/regression.h) on synthetic histories, seeded:
// the noise model of issue 20 and its targets. Each simulated series has a true time; every run gets
// a run-to-run factor (lognormal, sd `run_noise`), a clock/node state (+`clock_shift` in
// `clock_share` of runs), and `samples` raw samples with within-run noise `within_noise`; the run's
// observation is its samples' median and that median's RSE. A series' baseline is its last
// `baseline_results` runs (the coordinator's default), its reference its first `reference_results`.
// A new result is judged; a SLOWER is confirmed by one re-run (ConfirmRuns) before it counts as an
// alert. The table (printed) is the one in server/README.md.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "server/coordinator/regression.h"

namespace kbench::server {
namespace {

struct Noise {
  double run_noise = 0.01;     // Run-to-run relative sd.
  double within_noise = 0.003; // Within-run relative sd of a sample.
  double clock_share = 0.10;   // Share of runs in a clock/node state.
  double clock_shift = 0.03;   // Its slowdown.
  double drift_per_run = 0;    // Slow creep of the true time, per run.
};

struct Scenario {
  std::string name;
  Noise noise;
  double slowdown = 0;  // Of the judged run (and its re-run) against the history.
  int series = 3000;
};

struct Rates {
  double slower = 0, same = 0, ambiguous = 0, faster = 0;  // Of the first run's verdict.
  double alerted = 0;  // SLOWER, confirmed by the re-run.
};

constexpr int kSamples = 30;

class Simulator {
 public:
  explicit Simulator(uint64_t seed) : rng_(seed) {}

  api::RunObservation Run(double true_ns, const Noise& n) {
    const double run = std::exp(n.run_noise * normal_(rng_));
    const double clock = uniform_(rng_) < n.clock_share ? 1 + n.clock_shift : 1;
    std::vector<double> samples(kSamples);
    for (double& s : samples) s = true_ns * run * clock * (1 + n.within_noise * normal_(rng_));
    return RunOf(samples, 0);
  }

  Rates Simulate(const Scenario& s, const RegressionConfig& config) {
    Rates r;
    const int history = config.baseline_results + config.reference_results;
    for (int i = 0; i < s.series; ++i) {
      // History oldest first; the reference is the oldest runs, the baseline the newest.
      std::vector<api::RunObservation> runs;
      double t = 1000 * std::exp(3 * uniform_(rng_));  // Series of 1-20 us.
      for (int k = 0; k < history; ++k) {
        runs.push_back(Run(t, s.noise));
        t *= 1 + s.noise.drift_per_run;
      }
      PooledBaseline reference{config.reference_results, {runs.begin(), runs.begin() + config.reference_results}, {}};
      PooledBaseline baseline{config.baseline_results, {runs.end() - config.baseline_results, runs.end()}, {}};
      const api::RunObservation first = Run(t * (1 + s.slowdown), s.noise);
      const RegressionAnalysis a =
          AnalyzeRuns(std::span<const api::RunObservation>(&first, 1), kSamples, baseline, &reference, config);
      r.slower += a.verdict == v1::SLOWER;
      r.same += a.verdict == v1::SAME;
      r.ambiguous += a.verdict == v1::AMBIGUOUS;
      r.faster += a.verdict == v1::FASTER;
      if (NeedsConfirmation(a, config)) {
        const api::RunObservation rerun = Run(t * (1 + s.slowdown), s.noise);
        r.alerted += ConfirmRuns(first, rerun, kSamples, baseline, &reference, config).verdict == v1::SLOWER;
      }
    }
    for (double* x : {&r.slower, &r.same, &r.ambiguous, &r.faster, &r.alerted}) *x /= s.series;
    return r;
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0, 1};
  std::uniform_real_distribution<double> uniform_{0, 1};
};

Noise N(double run, double clock_share, double within = 0.003, double drift = 0) {
  return Noise{run, within, clock_share, 0.03, drift};
}

TEST(VerdictSimulation, MeetsTheTargets) {
  const RegressionConfig config;
  const std::vector<Scenario> scenarios = {
      {"unchanged, run 0.3%, within 0.1%", N(0.003, 0.10, 0.001)},
      {"unchanged, run 1%", N(0.01, 0.0)},
      {"unchanged, run 1%, +3% clock 10%", N(0.01, 0.10)},
      {"unchanged, run 2%, +3% clock 10%", N(0.02, 0.10, 0.005)},
      {"unchanged, run 1%, drift +0.02%/run", N(0.01, 0.0, 0.003, 0.0002)},
      {"+5%, run 0.3%, +3% clock 10%", N(0.003, 0.10), 0.05},
      {"+5%, run 1%", N(0.01, 0.0), 0.05},
      {"+5%, run 1%, +3% clock 10%", N(0.01, 0.10), 0.05},
      {"+5%, run 2%, +3% clock 10%", N(0.02, 0.10), 0.05},
      {"+10%, run 1%, +3% clock 10%", N(0.01, 0.10), 0.10},
      {"+10%, run 2%, +3% clock 10%", N(0.02, 0.10), 0.10},
      {"creep +0.2%/run (6% over the history)", N(0.005, 0.0, 0.003, 0.002)},
  };
  Simulator sim(20261201);
  std::vector<Rates> rates;
  std::string table = "| scenario | SLOWER | alerted (confirmed) | SAME | AMBIGUOUS | FASTER |\n|---|---|---|---|---|---|\n";
  for (const Scenario& s : scenarios) {
    rates.push_back(sim.Simulate(s, config));
    const Rates& r = rates.back();
    table += absl::StrFormat("| %s | %.2f%% | %.2f%% | %.1f%% | %.1f%% | %.2f%% |\n", s.name, 100 * r.slower,
                             100 * r.alerted, 100 * r.same, 100 * r.ambiguous, 100 * r.faster);
  }
  std::printf("%d series per row, %d raw samples per run, baseline %d runs, reference %d runs\n%s",
              scenarios[0].series, kSamples, config.baseline_results, config.reference_results, table.c_str());

  // False SLOWER <= 1% per series with run-to-run noise up to 2% and a +3% clock state in 10% of
  // runs, once confirmed by the re-run (what raises the gauge and its alert). A single run cannot
  // tell a +3% clock state from a +3% regression: on a tight series a clock-state run reads SLOWER
  // on its own, which is what the re-run is for; without clock states the single run holds too.
  for (int i : {0, 1, 2, 3, 4}) {
    EXPECT_LE(rates[i].alerted, 0.01) << scenarios[i].name;
    EXPECT_LE(rates[i].faster, 0.01) << scenarios[i].name;
  }
  for (int i : {1, 4}) EXPECT_LE(rates[i].slower, 0.01) << scenarios[i].name;
  // An unchanged series reads SAME (not AMBIGUOUS) in >= 80% of runs at 1% run-to-run noise.
  EXPECT_GE(rates[1].same, 0.80);
  // A 5% slowdown is alerted (SLOWER, confirmed) >= 95% of the time at 1% run-to-run noise, and at
  // 0.3% with the clock states. (At 1% with clock states in 10% of runs the baseline's spread grows
  // to ~1.35% and the rate falls: the table says by how much; it is not a target.)
  for (int i : {5, 6}) EXPECT_GE(rates[i].alerted, 0.95) << scenarios[i].name;
  // A 10% slowdown always reads SLOWER at 1% noise with clock states.
  EXPECT_GE(rates[9].slower, 0.995);
  EXPECT_GE(rates[9].alerted, 0.995);
  // Slow creep: the pinned reference catches what the rolling baseline follows.
  EXPECT_GE(rates[11].slower, 0.95);
}

TEST(VerdictSimulation, TheReferenceIsWhatCatchesCreep) {
  // Without the reference, the recent baseline moves with the creep and misses most of it.
  const RegressionConfig config;
  Simulator with(7), without(7);
  const Scenario creep{"creep", N(0.005, 0.0, 0.003, 0.002)};
  RegressionConfig no_reference = config;
  no_reference.reference_results = 0;
  EXPECT_GE(with.Simulate(creep, config).slower, 0.95);
  EXPECT_LE(without.Simulate(creep, no_reference).slower, 0.5);
}

}  // namespace
}  // namespace kbench::server
