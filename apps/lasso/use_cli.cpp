// `rotor lasso predict` and `rotor lasso eval`: a model file applied to raw samples.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/lasso/cli.h"
#include "apps/lasso/data.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/lasso/data_binary.h"
#include "core/lasso/model_file.h"

namespace rotor::apps {
namespace {

struct UseFlags {
    std::string model;
    lasso_cli::DataFlags data;
    std::string out;
};

/// The samples to apply `m` to: libsvm may name features the model never saw (ignored); csv
/// must have the model's columns (and, when both have a header, the same names).
lasso::RawData read_for(const UseFlags& f, const lasso::Model& m) {
    lasso::RawData raw = f.data.read(m.features);
    if (raw.dense) {  // csv, or its binary form
        if (raw.features != m.features)
            throw InputError(f.data.path, fmt::format("{} feature columns, but the model has {}",
                                                      raw.features, m.features));
        if (!raw.feature_names.empty() && !m.feature_names.empty()) {
            for (std::uint32_t j = 0; j < m.features; ++j) {
                if (raw.feature_names[j] != m.feature_names[j])
                    throw InputError(f.data.path,
                                     fmt::format("column '{}' where the model has '{}'",
                                                 raw.feature_names[j], m.feature_names[j]));
            }
        }
    }
    return raw;
}

std::vector<double> predictions(const lasso::Model& m, const lasso::RawData& raw) {
    std::vector<double> out(raw.samples());
    for (std::uint32_t i = 0; i < raw.samples(); ++i) {
        const auto e0 = static_cast<std::ptrdiff_t>(raw.row_offsets[i]);
        const auto n = static_cast<std::size_t>(raw.row_offsets[i + 1] - raw.row_offsets[i]);
        out[i] = m.predict({raw.cols.data() + e0, n}, {raw.values.data() + e0, n});
    }
    return out;
}

void run_predict(const UseFlags& f) {
    const lasso::Model m = lasso::read_model(f.model);
    const lasso::RawData raw = read_for(f, m);
    std::string text;
    for (double y : predictions(m, raw)) text += fmt::format("{:.17g}\n", y);
    if (f.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
        core::write_file_atomically(f.out, text);
    }
}

void run_eval(const UseFlags& f) {
    const lasso::Model m = lasso::read_model(f.model);
    const lasso::RawData raw = read_for(f, m);
    const std::vector<double> yhat = predictions(m, raw);
    const double n = raw.samples();
    double mean = 0;
    for (double y : raw.targets) mean += y;
    mean /= n;
    double sse = 0, sst = 0, sae = 0;
    for (std::uint32_t i = 0; i < raw.samples(); ++i) {
        const double e = raw.targets[i] - yhat[i];
        sse += e * e;
        sae += std::fabs(e);
        sst += (raw.targets[i] - mean) * (raw.targets[i] - mean);
    }
    // R² as scikit-learn's r2_score: 1 − SSE/SST (1 for a perfect fit of a constant target).
    const double r2 = sst > 0 ? 1 - sse / sst : (sse == 0 ? 1.0 : 0.0);
    fmt::print("samples\t{}\nmse\t{:.10g}\nrmse\t{:.10g}\nmae\t{:.10g}\nr2\t{:.10g}\n",
               raw.samples(), sse / n, std::sqrt(sse / n), sae / n, r2);
}

void add_use(CLI::App& lasso, const char* name, const char* help, bool predict) {
    auto f = std::make_shared<UseFlags>();
    auto* c = lasso.add_subcommand(name, help);
    c->add_option("--model,-m", f->model, "A model file of `rotor lasso train`")->required();
    f->data.add(*c, predict ? "Samples to predict (their target field is read but not used)"
                            : "Samples with their targets");
    if (predict) c->add_option("--out,-o", f->out, "Write the predictions here (default: stdout)");
    c->callback([f, predict] {
        if (predict) {
            run_predict(*f);
        } else {
            run_eval(*f);
        }
    });
}

struct BuildFlags {
    lasso_cli::DataFlags data;
    std::string out;
    bool quiet = false;
};

void add_build(CLI::App& lasso) {
    auto f = std::make_shared<BuildFlags>();
    auto* c = lasso.add_subcommand(
        "build", "Write samples in the binary form (mmap, CRC-checked) every lasso command reads");
    f->data.add(*c, "Samples: LIBSVM/svmlight or CSV/TSV (gzip allowed)");
    c->add_option("--out,-o", f->out, "The binary file to write")->required();
    c->add_flag("--quiet,-q", f->quiet, "No summary line");
    c->callback([f] {
        const lasso::RawData raw = f->data.read();
        lasso::write_data_binary(f->out, raw);
        if (!f->quiet)
            fmt::print("rotor: {} samples, {} features, {} stored entries{} written to {}\n",
                       raw.samples(), raw.features, raw.values.size(), raw.dense ? " (dense)" : "",
                       f->out);
    });
}

}  // namespace

void add_lasso_use_commands(CLI::App& lasso) {
    add_use(lasso, "predict", "Predict y for samples: one number per line", true);
    add_use(lasso, "eval", "MSE, RMSE, MAE and R^2 of a model on samples with targets", false);
    add_build(lasso);
}

}  // namespace rotor::apps
