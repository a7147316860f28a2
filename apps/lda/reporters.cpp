#include "apps/lda/reporters.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rotor::lda {
namespace {

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

}  // namespace

std::string metrics_json(const IterationMetrics& m) {
    nlohmann::ordered_json j;
    j["iter"] = m.iter;
    j["time_s"] = m.time_s;
    j["tokens_per_s"] = m.tokens_per_s;
    if (m.loglik) {
        j["loglik_word"] = m.loglik->loglik_word;
        j["loglik"] = m.loglik->loglik;
        j["loglik_word_per_token"] = m.loglik_word_per_token;
        j["loglik_per_token"] = m.loglik_per_token;
    }
    j["effective_ratio"] = m.effective_ratio;
    j["load_cv"] = m.load_cv;
    j["overhead_ratio"] = m.overhead_ratio;
    j["processed_ratio"] = m.processed_ratio;
    j["s_error"] = m.s_error;
    for (const auto& [key, value] : m.extra) j[key] = value;
    for (const auto& [key, values] : m.extra_arrays) j[key] = values;
    j["iteration_s"] = m.iteration_s;
    j["tokens_sampled"] = m.tokens_sampled;
    return j.dump();
}

void TerminalReporter::on_start(std::string_view summary) {
    fmt::print(out_, "rotor: training on {}\n", summary);
    std::fflush(out_);
}

void TerminalReporter::on_iteration(const IterationMetrics& m, std::uint32_t last_iteration) {
    if (first_ == 0) first_ = m.iter;
    const double per_iter = m.time_s / (m.iter - first_ + 1);
    const double eta = per_iter * (last_iteration - m.iter);
    recent_.emplace_back(m.tokens_sampled, m.iteration_s);
    if (recent_.size() > kRateWindow) recent_.pop_front();
    std::uint64_t tokens = 0;
    double seconds = 0;
    for (const auto& [n, s] : recent_) {
        tokens += n;
        seconds += s;
    }
    const double rate = seconds > 0 ? static_cast<double>(tokens) / seconds : m.tokens_per_s;
    std::string ll =
        m.loglik ? fmt::format("loglik/token {:.4f}", m.loglik_per_token) : std::string(20, ' ');
    fmt::print(out_, "iter {:>{}}/{}  {}  {} tok/s  elapsed {}  ETA {}\n", m.iter,
               std::to_string(last_iteration).size(), last_iteration, ll, human_rate(rate),
               human_duration(m.time_s), human_duration(eta));
    std::fflush(out_);
}

void JsonLinesReporter::on_iteration(const IterationMetrics& m, std::uint32_t) {
    file_.write(metrics_json(m));
    file_.write("\n");
}

}  // namespace rotor::lda
