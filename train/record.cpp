#include "train/record.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sched/worker_clock.h"

namespace rotor::train {

void Record::set(std::string_view key, double value) {
    for (auto& [k, v] : values) {
        if (k == key) {
            v = value;
            return;
        }
    }
    values.emplace_back(std::string(key), value);
}

std::optional<double> Record::get(std::string_view key) const {
    for (const auto& [k, v] : values)
        if (k == key) return v;
    return std::nullopt;
}

void Record::set_array(std::string_view key, std::vector<double> a) {
    for (auto& [k, v] : arrays) {
        if (k == key) {
            v = std::move(a);
            return;
        }
    }
    arrays.emplace_back(std::string(key), std::move(a));
}

const std::vector<double>* Record::array(std::string_view key) const {
    for (const auto& [k, v] : arrays)
        if (k == key) return &v;
    return nullptr;
}

void Record::set_times(const sched::IterationTimes& times) {
    iteration_s = times.wall_s;
    effective_ratio = times.effective_ratio;
    load_cv = times.load_cv;
    overhead_ratio = times.overhead_ratio;
    // Per-thread breakdown (HarpLDA+ Table 4: effective / wait / overhead).
    set_array("thread_compute_s", times.compute_s);
    set_array("thread_wait_s", times.wait_s);
    set_array("thread_other_s", times.other_s);
}

void Record::finish(std::uint64_t available) {
    per_s = iteration_s > 0 ? static_cast<double>(processed) / iteration_s : 0;
    processed_ratio =
        available ? static_cast<double>(processed) / static_cast<double>(available) : 1.0;
}

void Record::set_label(std::string_view key, std::string value) {
    for (auto& [k, v] : labels) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    labels.emplace_back(std::string(key), std::move(value));
}

const std::string* Record::label(std::string_view key) const {
    for (const auto& [k, v] : labels) {
        if (k == key) return &v;
    }
    return nullptr;
}

std::string record_json(const Record& r, const RecordSchema& schema) {
    nlohmann::ordered_json j;
    j["iter"] = r.iter;
    j["time_s"] = r.time_s;
    j[schema.rate_key] = r.per_s;
    for (const auto& [key, value] : r.values) j[key] = value;
    for (const auto& [key, value] : r.labels) j[key] = value;
    j["effective_ratio"] = r.effective_ratio;
    j["load_cv"] = r.load_cv;
    j["overhead_ratio"] = r.overhead_ratio;
    j["processed_ratio"] = r.processed_ratio;
    for (const auto& [key, values] : r.arrays) j[key] = values;
    j["iteration_s"] = r.iteration_s;
    j[schema.count_key] = r.processed;
    return j.dump();
}

}  // namespace rotor::train
