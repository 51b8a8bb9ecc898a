#pragma once
// The benchmarks' command lines, parsed by CLI11 as the CLI's are: `--help` lists every option with its default, and
// an unknown, malformed or out-of-range option is refused with the reason (exit 2) instead of being ignored.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace ps::bench {

// Parses argv into the options added to `app`: exits 0 after --help, 2 on bad input with one line naming it.
inline void parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
}

// `--sizes 1,16,64`: a comma-separated list of positive sizes, in `unit`.
template <typename T>
CLI::Option* addSizes(CLI::App& app, std::vector<T>& sizes, const std::string& unit) {
  return app.add_option("--sizes", sizes, "comma-separated sizes, in " + unit)
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

// `--reps R` and `--rounds R`: repetitions of a measurement (its best or median is kept) and alternating rounds.
inline CLI::Option* addCount(CLI::App& app, const std::string& name, int& value, const std::string& help) {
  return app.add_option(name, value, help)->check(CLI::PositiveNumber)->capture_default_str();
}

// `--a,b,c` lists of words (methods, stages, bandwidths).
inline CLI::Option* addList(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                            const std::string& help) {
  return app.add_option(name, values, help)->delimiter(',')->capture_default_str();
}

}  // namespace ps::bench
