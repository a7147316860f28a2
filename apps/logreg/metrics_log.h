// The records of the --metrics file of `rotor logreg train` (docs/logreg.md, "Metrics file"):
// one JSON object per evaluation, written to a train::MetricsFile (appended and flushed as it is
// made; a resumed run appends). Its keys begin with `iter` and `time_s`, as every model's
// (tools/plot_metrics reads them all). The same records make the progress lines on stdout
// (train::TerminalReporter).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "train/record.h"

namespace rotor::logreg {

struct Evaluation;

/// One record: keys in order, numbers (non-finite ones are written as null).
using MetricsRecord = std::vector<std::pair<std::string, double>>;

/// The keys every record begins with: iter, time_s (training seconds), eval_s (evaluation
/// seconds), objective, loss, penalty, nonzeros, kkt_violation, from evaluation `e` after
/// `iteration` iterations. `rotor logreg train` adds its own after them; the Python package's
/// LogisticRegression records these.
MetricsRecord evaluation_record(const Evaluation& e, std::uint64_t iteration, double time_s,
                                double eval_s);

/// The record as one JSON object (no newline); integral values without a fraction.
std::string metrics_json(const MetricsRecord& r);

/// How `rotor logreg train` shows a record on its progress line (train::TerminalReporter): the
/// objective, the subgradient's ratio to w = 0's (what --tol tests), the KKT violation, the
/// nonzeros and, with --test, AUC and accuracy; newton's rate in Newton iterations a second,
/// prox's in examples a second.
train::RecordSchema progress_schema(bool newton);

/// `r` as a train::Record for the progress line: its values, `processed` units (examples, or
/// Newton iterations) in the `iteration_s` seconds since the previous record.
train::Record progress_record(const MetricsRecord& r, std::uint64_t processed, double iteration_s);

}  // namespace rotor::logreg
