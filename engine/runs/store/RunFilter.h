#pragma once
// The runs filter, one language for the app's runs table and `pipesqueeze-cli runs list`. A filter is terms
// separated by spaces, and a run is shown when every term holds:
//
//   word              the run's name, tags, notes, status or a direction's method contains it (any case)
//   field:value       text: contains value (status and tag: is exactly value); number: equals value
//   field=value       text or number: equals;  field!=value: differs
//   field<value  field<=value  field>value  field>=value   numbers
//   -term             the term does not hold
//   "two words"       quotes keep spaces in a word or a value
//
// Numbers take a k, M or G suffix (wire<50M); accuracy and K take a % (accuracy>=85%, k<5%). The tags a claim
// suite gives its runs read as fields too: suite:smoke is tag:suite:smoke, variant:dense tag:variant:dense. A field
// with several values
// (method, k, bits, feedback, tag: one per compressed direction or tag) holds when any value does. A run without a
// value for a field (a dense run's k, a language model's accuracy) holds no term on it, and every negated one.
// Unknown fields, operators a field cannot take and malformed numbers are refused with the reason (FilterError).
#include "engine/runs/store/RunStore.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class FilterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a filter can ask of one run: text and numbers by field name, each possibly several values.
struct RunFacts {
  std::map<std::string, std::vector<std::string>> text;
  std::map<std::string, std::vector<double>> numbers;
  std::string words;  // what a bare word searches, lower-case, fields separated by newlines

  // From the store's record: the run's own fields, its configuration as it started and its summary.
  static RunFacts of(const RunInfo& info);
  // Adds a text value (once); the name, tag, notes, status and method fields also become searchable words.
  void addText(const std::string& field, const std::string& value);
  // Sets (or replaces) a number, as the app does with the figures of a run still going.
  void set(const std::string& field, double value) { numbers[field] = {value}; }
};

struct RunFilterField {
  std::string name;
  bool number;
  std::string help;
};

class RunFilter {
 public:
  RunFilter() = default;  // holds for every run
  // Throws FilterError naming the term and what is wrong with it.
  static RunFilter parse(const std::string& text);
  bool matches(const RunFacts& run) const;
  bool empty() const { return terms_.empty(); }
  // The fields a term may name, with their help (for `runs list --help`, the app's tooltip and the errors).
  static const std::vector<RunFilterField>& fields();

 private:
  enum class Op { Word, Contains, Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };
  struct Term {
    bool negated = false;
    Op op = Op::Word;
    std::string field, value;  // value lower-cased for text
    bool numeric = false;      // the field holds numbers (decided once, at parsing)
    double number = 0;
  };
  static Term parseTerm(const std::string& word, bool quoted);
  static bool holds(const Term& t, const RunFacts& run);

  std::vector<Term> terms_;
};

}  // namespace ps
