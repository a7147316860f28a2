#include "train/reporter.h"

#include <fmt/format.h>

namespace rotor::train {

std::string human_duration(double s) {
    if (s < 60) return fmt::format("{:.1f}s", s);
    const auto total = static_cast<long long>(s + 0.5);
    if (total < 3600) return fmt::format("{}m{:02d}s", total / 60, static_cast<int>(total % 60));
    return fmt::format("{}h{:02d}m", total / 3600, static_cast<int>((total % 3600) / 60));
}

std::string human_rate(double r) {
    if (r >= 1e6) return fmt::format("{:.2f}M", r / 1e6);
    if (r >= 1e3) return fmt::format("{:.1f}k", r / 1e3);
    return fmt::format("{:.0f}", r);
}

void TerminalReporter::on_start(std::string_view summary) {
    fmt::print(out_, "rotor: training on {}\n", summary);
    std::fflush(out_);
}

void TerminalReporter::on_iteration(const Record& r, std::uint32_t last_iteration) {
    if (first_ == 0) first_ = r.iter;
    const double per_iter = r.time_s / (r.iter - first_ + 1);
    const double eta = per_iter * (last_iteration - r.iter);
    recent_.emplace_back(r.processed, r.iteration_s);
    if (recent_.size() > kRateWindow) recent_.pop_front();
    std::uint64_t done = 0;
    double seconds = 0;
    for (const auto& [n, s] : recent_) {
        done += n;
        seconds += s;
    }
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : r.per_s;
    const std::string label =
        schema_.headline_label.empty() ? schema_.headline_key : schema_.headline_label;
    const auto headline = schema_.headline_key.empty() ? std::nullopt : r.get(schema_.headline_key);
    const std::string head =
        headline ? fmt::format("{} {:.4f}", label, *headline) : std::string(label.size() + 8, ' ');
    fmt::print(out_, "iter {:>{}}/{}  {}  {} {}  elapsed {}  ETA {}\n", r.iter,
               std::to_string(last_iteration).size(), last_iteration, head, human_rate(rate),
               schema_.rate_unit, human_duration(r.time_s), human_duration(eta));
    std::fflush(out_);
}

void JsonLinesReporter::on_iteration(const Record& r, std::uint32_t) {
    file_.write(record_json(r, schema_));
    file_.write("\n");
}

}  // namespace rotor::train
