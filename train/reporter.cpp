#include "train/reporter.h"

#include <unistd.h>

#include <utility>

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

TerminalReporter::TerminalReporter(std::FILE* out, RecordSchema schema, Mode mode)
    : out_(out), schema_(std::move(schema)) {
    in_place_ = mode == Mode::kInPlace || (mode == Mode::kAuto && ::isatty(::fileno(out)) == 1);
}

double TerminalReporter::rate_over(std::span<const std::pair<std::uint64_t, double>> records) {
    std::uint64_t done = 0;
    double seconds = 0;
    for (const auto& [n, s] : records) {
        done += n;
        seconds += s;
    }
    return seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
}

void TerminalReporter::on_start(std::string_view summary) {
    fmt::print(out_, "rotor: training on {}\n", summary);
    std::fflush(out_);
}

void TerminalReporter::on_iteration(const Record& r, std::uint32_t last_iteration) {
    if (first_ == 0) first_ = r.iter;
    ++iterations_;
    processed_ += r.processed;
    time_s_ = r.time_s;
    const double per_iter = r.time_s / (r.iter - first_ + 1);
    const double eta = per_iter * (last_iteration - r.iter);
    recent_.emplace_back(r.processed, r.iteration_s);
    if (recent_.size() > kRateWindow) recent_.pop_front();
    const std::vector<std::pair<std::uint64_t, double>> window(recent_.begin(), recent_.end());
    const double rate = rate_over(window);
    const std::string label =
        schema_.headline_label.empty() ? schema_.headline_key : schema_.headline_label;
    const auto headline = schema_.headline_key.empty() ? std::nullopt : r.get(schema_.headline_key);
    std::string head =
        headline ? fmt::format("{} {:.4f}", label, *headline) : std::string(label.size() + 8, ' ');
    std::vector<std::pair<std::string, double>> values;
    if (headline) values.emplace_back(label, *headline);
    for (const auto& [key, shown_label] : schema_.shown) {
        if (const auto v = r.get(key)) {
            head += fmt::format("  {} {:.4g}", shown_label, *v);
            values.emplace_back(shown_label, *v);
        }
    }
    if (!values.empty()) last_values_ = std::move(values);
    std::string labels;  // text values (e.g. LDA's "sampler")
    for (const auto& [key, value] : r.labels) labels += fmt::format("  {} {}", key, value);
    const std::string line =
        fmt::format("iter {:>{}}/{}  {}  {} {}  elapsed {}  ETA {}{}", r.iter,
                    std::to_string(last_iteration).size(), last_iteration, head, human_rate(rate),
                    schema_.rate_unit, human_duration(r.time_s), human_duration(eta), labels);
    if (!in_place_) {
        fmt::print(out_, "{}\n", line);
    } else {
        // Blank what a longer previous line leaves; keep evaluation lines and the last one.
        const std::size_t pad = last_width_ > line.size() ? last_width_ - line.size() : 0;
        const bool keep = headline.has_value() || r.iter >= last_iteration;
        fmt::print(out_, "\r{}{}{}", line, std::string(pad, ' '), keep ? "\n" : "");
        last_width_ = keep ? 0 : line.size();
    }
    std::fflush(out_);
}

std::string TerminalReporter::summary() const {
    if (iterations_ == 0) return "";
    const double seconds = time_s_;
    std::string s = fmt::format("{} iteration{} in {}", iterations_, iterations_ == 1 ? "" : "s",
                                human_duration(seconds));
    if (seconds > 0)
        s += fmt::format(", {} {}", human_rate(static_cast<double>(processed_) / seconds),
                         schema_.rate_unit);
    for (const auto& [label, value] : last_values_) s += fmt::format(", {} {:.4f}", label, value);
    return s;
}

JsonLinesReporter::JsonLinesReporter(const std::string& path, RecordSchema schema,
                                     std::optional<std::uint64_t> resume_at)
    : file_(path, resume_at), schema_(std::move(schema)) {}

void JsonLinesReporter::on_iteration(const Record& r, std::uint32_t) {
    if (file_.resumed_time_s() == 0) {
        file_.append(r.iter, record_json(r, schema_));
        return;
    }
    Record shifted = r;  // training seconds across resumes
    shifted.time_s += file_.resumed_time_s();
    file_.append(r.iter, record_json(shifted, schema_));
}

}  // namespace rotor::train
