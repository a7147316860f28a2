#include "core/lasso/model_file.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/number.h"

namespace rotor::lasso {
namespace {

constexpr std::string_view kMagic = "rotor-lasso-model";
constexpr int kVersion = 1;

std::uint32_t crc_of(std::string_view bytes) { return core::crc32(bytes); }

std::string num(double x) { return fmt::format("{:.17g}", x); }

/// Walks the lines of a model file, with positions for the errors.
class Lines {
  public:
    Lines(std::string_view text, std::string name) : text_(text), name_(std::move(name)) {}

    [[noreturn]] void fail(std::uint64_t col, const std::string& what) const {
        throw InputError(name_, line_, col, what);
    }
    /// The next line's tab-separated fields; fails at the end of the text.
    std::vector<std::string_view> next(const char* expecting) {
        if (pos_ >= text_.size()) {
            ++line_;
            fail(1, fmt::format("the file ends where {} was expected", expecting));
        }
        const std::size_t end = text_.find('\n', pos_);
        ++line_;
        if (end == std::string_view::npos) fail(1, "the last line has no newline");
        start_ = pos_;
        const std::string_view l = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        std::vector<std::string_view> fields;
        std::size_t at = 0;
        while (true) {
            const std::size_t tab = l.find('\t', at);
            fields.push_back(l.substr(at, tab == std::string_view::npos ? l.npos : tab - at));
            if (tab == std::string_view::npos) break;
            at = tab + 1;
        }
        return fields;
    }
    /// The column of field k of the current line (1-based).
    std::uint64_t col(const std::vector<std::string_view>& f, std::size_t k) const {
        return static_cast<std::uint64_t>(f[k].data() - (text_.data() + start_)) + 1;
    }
    /// A `key<TAB>value` line's value.
    std::string_view value(std::string_view key) {
        const std::string k(key);
        const auto f = next(k.c_str());
        if (f[0] != key) fail(1, fmt::format("expected '{}'", key));
        if (f.size() != 2) fail(1, fmt::format("'{}' takes one value", key));
        value_col_ = col(f, 1);
        return f[1];
    }
    double number(std::string_view key) {
        const std::string_view v = value(key);
        const auto x = core::parse_number(v);
        if (!x) fail(value_col_, fmt::format("'{}' is not a finite number", v));
        return *x;
    }
    std::uint64_t count(std::string_view key, std::uint64_t max) {
        const double x = number(key);
        if (x < 0 || x != std::floor(x) || x > static_cast<double>(max))
            fail(value_col_, fmt::format("{} must be a whole number in [0, {}]", key, max));
        return static_cast<std::uint64_t>(x);
    }
    bool flag(std::string_view key) {
        const std::string_view v = value(key);
        if (v != "0" && v != "1") fail(value_col_, fmt::format("{} must be 0 or 1", key));
        return v == "1";
    }
    std::size_t start() const { return start_; }
    bool at_end() const { return pos_ >= text_.size(); }

  private:
    std::string_view text_;
    std::string name_;
    std::size_t pos_ = 0;
    std::size_t start_ = 0;
    std::uint64_t line_ = 0;
    std::uint64_t value_col_ = 1;
};

void read_features(Lines& in, Model& m) {
    Standardization& st = m.standardization;
    st.means.resize(m.features);
    st.scales.resize(m.features);
    m.beta.resize(m.features);
    std::vector<std::string> names(m.features);
    bool any_name = false;
    for (std::uint32_t j = 0; j < m.features; ++j) {
        const auto f = in.next("a feature line");
        if (f[0] != "feature") in.fail(1, "expected 'feature'");
        if (f.size() != 6) in.fail(1, "a feature line has 6 fields");
        if (f[1] != std::to_string(j)) in.fail(in.col(f, 1), fmt::format("expected feature {}", j));
        double* out[3] = {&st.means[j], &st.scales[j], &m.beta[j]};
        for (std::size_t k = 0; k < 3; ++k) {
            const auto x = core::parse_number(f[2 + k]);
            if (!x) in.fail(in.col(f, 2 + k), "not a finite number");
            *out[k] = *x;
        }
        if (!(st.scales[j] > 0)) in.fail(in.col(f, 3), "a scale must be > 0");
        names[j] = std::string(f[5]);
        any_name = any_name || !names[j].empty();
    }
    if (any_name) m.feature_names = std::move(names);
}

}  // namespace

Model Model::from_standardized(std::span<const double> b, const Standardization& st) {
    Model m;
    m.features = static_cast<std::uint32_t>(b.size());
    m.standardization = st;
    m.beta.resize(b.size());
    for (std::uint32_t j = 0; j < m.features; ++j) m.beta[j] = st.raw_coefficient(j, b[j]);
    m.intercept = st.raw_intercept(b);
    return m;
}

double Model::predict(std::span<const std::uint32_t> cols, std::span<const double> values) const {
    double y = intercept;
    for (std::size_t e = 0; e < cols.size(); ++e) {
        if (cols[e] < features) y += beta[cols[e]] * values[e];
    }
    return y;
}

std::uint32_t Model::nonzeros() const {
    std::uint32_t k = 0;
    for (double x : beta) k += x != 0 ? 1 : 0;
    return k;
}

void Model::check(const std::string& name) const {
    const Standardization& st = standardization;
    if (beta.size() != features || st.means.size() != features || st.scales.size() != features ||
        (!feature_names.empty() && feature_names.size() != features))
        throw InputError(name, "the model's arrays do not match its feature count");
    for (std::uint32_t j = 0; j < features; ++j) {
        if (!std::isfinite(beta[j]) || !std::isfinite(st.means[j]) || !(st.scales[j] > 0) ||
            !std::isfinite(st.scales[j]))
            throw InputError(name, fmt::format("feature {}: a value is not finite", j));
    }
    if (!std::isfinite(intercept) || !std::isfinite(lambda) || !std::isfinite(st.y_mean) ||
        !(st.y_scale > 0))
        throw InputError(name, "the intercept, lambda or y's statistics are not finite");
}

std::string model_text(const Model& m) {
    m.check("model");
    const Standardization& st = m.standardization;
    std::string s = fmt::format("{}\nversion\t{}\nfeatures\t{}\nsamples\t{}\nlambda\t{}\n", kMagic,
                                kVersion, m.features, m.samples, num(m.lambda));
    s += fmt::format("schedule\t{}\niterations\t{}\nobjective\t{}\nrelative_gap\t{}\n", m.schedule,
                     m.iterations, num(m.objective), num(m.relative_gap));
    s += fmt::format("intercept\t{}\nstandardize\t{}\ny_mean\t{}\ny_scale\t{}\nbeta0\t{}\n",
                     st.intercept ? 1 : 0, m.standardize ? 1 : 0, num(st.y_mean), num(st.y_scale),
                     num(m.intercept));
    for (std::uint32_t j = 0; j < m.features; ++j) {
        const std::string name = m.feature_names.empty() ? std::string() : m.feature_names[j];
        s += fmt::format("feature\t{}\t{}\t{}\t{}\t{}\n", j, num(st.means[j]), num(st.scales[j]),
                         num(m.beta[j]), name);
    }
    s += fmt::format("crc32\t{:08x}\n", crc_of(s));
    return s;
}

void write_model(const std::string& path, const Model& model) {
    for (const std::string& n : model.feature_names) {
        if (n.find_first_of("\t\n\r") != std::string::npos)
            throw InputError(path, fmt::format("feature name '{}' has a tab or newline", n));
    }
    core::write_file_atomically(path, model_text(model));
}

Model parse_model(const std::string& text, const std::string& name) {
    Lines in(text, name);
    if (in.next("the magic line") != std::vector<std::string_view>{kMagic})
        in.fail(1, fmt::format("not a rotor Lasso model (the first line is not '{}')", kMagic));
    if (in.value("version") != std::to_string(kVersion))
        in.fail(9, fmt::format("unsupported version (this rotor reads version {})", kVersion));
    Model m;
    m.features = static_cast<std::uint32_t>(in.count("features", 0xFFFFFFFFu));
    m.samples = in.count("samples", std::uint64_t{1} << 53);
    m.lambda = in.number("lambda");
    m.schedule = std::string(in.value("schedule"));
    m.iterations = static_cast<std::uint32_t>(in.count("iterations", 0xFFFFFFFFu));
    m.objective = in.number("objective");
    m.relative_gap = in.number("relative_gap");
    m.standardization.intercept = in.flag("intercept");
    m.standardize = in.flag("standardize");
    m.standardization.y_mean = in.number("y_mean");
    m.standardization.y_scale = in.number("y_scale");
    m.intercept = in.number("beta0");
    read_features(in, m);
    const auto crc = in.next("the crc32 line");
    const std::size_t body = in.start();
    if (crc.size() != 2 || crc[0] != "crc32") in.fail(1, "expected 'crc32' and its value");
    if (fmt::format("{:08x}", crc_of(std::string_view(text).substr(0, body))) != crc[1])
        in.fail(7, "CRC-32 mismatch: the file is corrupt");
    if (!in.at_end()) in.fail(1, "text after the crc32 line");
    m.check(name);
    return m;
}

Model read_model(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path, "cannot open the model file");
    std::ostringstream s;
    s << f.rdbuf();
    return parse_model(s.str(), path);
}

}  // namespace rotor::lasso
